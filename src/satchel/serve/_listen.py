"""Why listening on an address failed, in one sentence for a person."""

from __future__ import annotations

import errno
import socket

__all__ = ["listen_problem"]


def listen_problem(exc: OSError, host: str, port: int) -> str:
    """One sentence saying why listening on ``host:port`` failed."""
    if isinstance(exc, socket.gaierror):
        return f"cannot resolve the host {host!r}: {exc.strerror or exc}."
    if exc.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {host} is in use (another satchel?); pick another port, or 0 "
            "for any free one."
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"{host} is not an address of this machine, so satchel cannot listen on it."
    if exc.errno == errno.EACCES:
        return f"no permission to listen on port {port} (ports below 1024 need privileges)."
    return f"cannot listen on {host}:{port}: {exc.strerror or exc}."
