"""Checks on ``serve --http`` before anything heavy starts: does the host resolve, is it
this machine's loopback, can the port be listened on, and is the token a real one.

Each failure is a :class:`typer.BadParameter`, which the CLI's boundary prints as one
``Error: ...`` line with exit status 2.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import Mapping

import typer

from satchel.serve import listen_problem

__all__ = [
    "TOKEN_ENV",
    "check_listen",
    "check_token",
    "is_loopback",
    "listen_problem",
    "typed_on_command_line",
]

TOKEN_ENV = "SATCHEL_TOKEN"
"""The environment variable ``--token`` is read from."""

_HINT = "'--http'"


def _addresses(host: str, hint: str) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise typer.BadParameter(
            f"cannot resolve the host {host!r}: {getattr(exc, 'strerror', None) or exc}.",
            param_hint=hint,
        ) from None
    return [str(info[4][0]) for info in infos]


def is_loopback(host: str, *, hint: str = _HINT) -> bool:
    """Whether ``host`` is only ever this machine: a loopback address, or a name whose
    every address is one (``localhost``).

    Args:
        host: The host name or address.
        hint: The option named in the error (``serve``'s ``--http``, ``console``'s
            ``--host``).

    Raises:
        typer.BadParameter: ``host`` is a name that does not resolve.
    """
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    return all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in _addresses(host, hint))


def check_listen(host: str, port: int, *, host_hint: str = _HINT, port_hint: str = _HINT) -> None:
    """Bind ``host:port`` the way the server will, then let it go, so a busy port or a
    foreign address fails at once with one line rather than after the store opened.

    Args:
        host: The address to listen on.
        port: The port.
        host_hint: The option that gave ``host``, named when the host is the problem.
        port_hint: The option that gave ``port``, named when the port is (busy, or
            privileged); ``serve`` gives both as ``--http``, ``console`` has ``--host``
            and ``--port``.

    Raises:
        typer.BadParameter: the host does not resolve or the port cannot be listened on.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
            probe.listen(1)
    except (OSError, UnicodeError) as exc:
        if isinstance(exc, UnicodeError):
            exc = socket.gaierror(socket.EAI_NONAME, str(exc))
        port_problem = exc.errno in (errno.EADDRINUSE, errno.EACCES)
        raise typer.BadParameter(
            listen_problem(exc, host, port), param_hint=port_hint if port_problem else host_hint
        ) from None


def typed_on_command_line(ctx: typer.Context, name: str) -> bool:
    """Whether the option ``name`` was typed on the command line (not read from an
    environment variable or left at its default)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def check_token(
    token: str | None,
    *,
    http: bool,
    from_command_line: bool,
    environ: Mapping[str, str],
    allow_unauthenticated: bool,
    loopback: bool,
) -> str | None:
    """The bearer token ``serve`` will require, after refusing the unsafe cases.

    Args:
        token: ``--token`` as parsed (typer treats an empty ``SATCHEL_TOKEN`` as unset).
        http: Whether ``--http`` was given.
        from_command_line: Whether ``--token`` was typed rather than read from the
            environment.
        environ: The environment, to see an empty ``SATCHEL_TOKEN``.
        allow_unauthenticated: ``--allow-unauthenticated`` was given.
        loopback: The ``--http`` host is this machine only.

    Raises:
        typer.BadParameter: ``--token`` without ``--http``; an empty or blank token; a
            non-loopback address without a token or ``--allow-unauthenticated``.
    """
    if not http:
        if token is not None and from_command_line:
            raise typer.BadParameter(
                "applies to --http only; stdio needs no token.", param_hint="'--token'"
            )
        if allow_unauthenticated:
            raise typer.BadParameter(
                "applies to --http only.", param_hint="'--allow-unauthenticated'"
            )
        return None
    blank_env = TOKEN_ENV in environ and not environ[TOKEN_ENV].strip()
    if (token is not None and not token.strip()) or (token is None and blank_env):
        raise typer.BadParameter(
            "is empty, and an empty token would let anyone in; give a real token, or leave it out.",
            param_hint="'--token'" if from_command_line else f"'{TOKEN_ENV}'",
        )
    if token is None and not loopback and not allow_unauthenticated:
        raise typer.BadParameter(
            "serving a non-loopback address without --token lets anyone who can reach it "
            "call the tools; give --token, or --allow-unauthenticated if you mean it.",
            param_hint=_HINT,
        )
    return token
