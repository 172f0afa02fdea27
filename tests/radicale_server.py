"""A real Radicale CalDAV server for tests and benchmarks (Radicale from PyPI).

:func:`running_radicale` starts ``python -m radicale`` on a free port of 127.0.0.1
with its storage in a fresh temporary folder and no authentication, waits for the
line where it says it listens (read from its log; no polling, no sleeps), yields the
base URL, and stops it at the end.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["running_radicale"]

_START_TIMEOUT = 60


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_radicale(storage: Path | None = None) -> Iterator[str]:
    """A running Radicale server; yields its URL, e.g. ``http://127.0.0.1:5232/``.

    Args:
        storage: The folder for its collections (default: a temporary one). A benchmark
            may fill a calendar's folder, ``<storage>/collection-root/USER/CALENDAR/``,
            with ``.ics`` files directly.

    Raises:
        RuntimeError: It did not start within a minute.
    """
    with tempfile.TemporaryDirectory(prefix="radicale-") as folder:
        port = _free_port()
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "radicale",
                "--server-hosts",
                f"127.0.0.1:{port}",
                "--storage-filesystem-folder",
                str(storage if storage is not None else Path(folder) / "collections"),
                "--auth-type",
                "none",
                "--logging-level",
                "info",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        ready = threading.Event()
        log: list[str] = []

        def watch() -> None:
            assert process.stderr is not None
            for line in process.stderr:
                if len(log) < 200:
                    log.append(line)
                if "Listening on" in line or "listening on" in line:
                    ready.set()
            ready.set()  # it exited: stop waiting

        reader = threading.Thread(target=watch, daemon=True)
        reader.start()
        try:
            if not ready.wait(_START_TIMEOUT) or process.poll() is not None:
                raise RuntimeError("Radicale did not start:\n" + "".join(log[-20:]))
            yield f"http://127.0.0.1:{port}/"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
            reader.join(timeout=10)
