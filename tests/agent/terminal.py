"""A ``satchel`` process on a pseudo-terminal of its own, as a person's shell runs it:
the terminal is its controlling terminal and its process group the foreground one, so
Ctrl-C (``\\x03`` typed at the terminal) makes the terminal driver send it SIGINT.

Waits are bounded by timeouts on ``select``, never by sleeping.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Sequence

# The child opens its session (start_new_session), takes the terminal on its standard
# input as its controlling terminal (TIOCSCTTY, which also makes its process group the
# foreground one), then becomes `python -m satchel`.
_LAUNCH = (
    "import fcntl, os, sys, termios\n"
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0)\n"
    "os.execv(sys.executable, [sys.executable, '-m', 'satchel', *sys.argv[1:]])\n"
)

CTRL_C = b"\x03"


class Terminal:
    """``satchel ARGS`` running on a new pseudo-terminal; its output is collected in
    :attr:`output` (standard output and standard error both go to the terminal)."""

    def __init__(self, args: Sequence[str], env: dict[str, str]) -> None:
        master, slave = os.openpty()
        self._master = master
        self._closed = False
        self.output = ""
        self.process = subprocess.Popen(
            [sys.executable, "-c", _LAUNCH, *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**env, "COLUMNS": "200", "TERM": "dumb"},
            start_new_session=True,
        )
        os.close(slave)

    def send(self, data: bytes) -> None:
        """Type ``data`` at the terminal (``b"\\r"`` is Enter, :data:`CTRL_C` Ctrl-C)."""
        os.write(self._master, data)

    def expect(self, text: str, timeout: float = 60) -> None:
        """Read until ``text`` has been printed.

        Raises:
            AssertionError: it was not printed within ``timeout`` seconds, or the
                process ended first.
        """
        deadline = time.monotonic() + timeout
        while text not in self.output:
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                raise AssertionError(f"{text!r} never came; the terminal shows:\n{self.output}")

    def wait(self, timeout: float) -> int:
        """The exit status, once the process ends (reading what it prints meanwhile).

        Raises:
            AssertionError: it did not end within ``timeout`` seconds (it is killed).
        """
        deadline = time.monotonic() + timeout
        while self.process.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise AssertionError(f"still running after {timeout} s:\n{self.output}")
            self._read(min(left, 0.2))
        while self._read(0):
            pass
        return self.process.returncode

    def close(self) -> None:
        """Kill the process if it still runs, and close the terminal. Idempotent."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        if not self._closed:
            self._closed = True
            os.close(self._master)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _read(self, timeout: float) -> bool:
        """Read what is there within ``timeout`` seconds; ``False`` at the end."""
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return self.process.poll() is None
        try:
            chunk = os.read(self._master, 65536)
        except OSError:  # EIO: every end of the terminal's other side is closed
            return False
        self.output += chunk.decode(errors="replace").replace("\r\n", "\n")
        return bool(chunk)
