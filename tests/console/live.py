"""A real ``satchel console`` process for the browser tests, and where their
screenshots go."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["STARTUP", "artifacts", "running_console"]

STARTUP = 90.0
"""Seconds a console process may take to start (imports and the embedder, 2 busy cores)."""


def artifacts() -> Path:
    """Where the tests save screenshots: ``$SATCHEL_ARTIFACTS``, else
    ``tests/artifacts/console`` (ignored by git)."""
    root = os.environ.get("SATCHEL_ARTIFACTS")
    where = Path(root) if root else Path(__file__).resolve().parents[1] / "artifacts"
    folder = where / "console"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextmanager
def running_console(db: Path, *args: str) -> Iterator[str]:
    """``satchel console --db DB --port 0 ARGS`` running; yields its URL."""
    command = [sys.executable, "-m", "satchel", "console", "--db", str(db), "--port", "0", *args]
    process = subprocess.Popen(
        command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=dict(os.environ)
    )
    assert process.stderr is not None
    found: list[str] = []
    seen: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            seen.append(line)
            match = re.search(r"console is at (http://\S+)", line)
            if match and not found:
                found.append(match.group(1).rstrip("/"))
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    try:
        ready.wait(STARTUP)
        assert found, f"satchel console did not start: {''.join(seen)[-3000:]}"
        yield found[0]
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
