"""Lines of standard input read on the event loop, for ``satchel chat``.

``input()`` blocks its thread until a line comes, so it has to run in a worker thread,
and a worker thread cannot be cancelled: after Ctrl-C at the ``you>`` prompt the
session waited for that thread forever (only ``kill -9`` ended it). :class:`StdinLines`
waits for standard input to become readable on the event loop instead, which a
cancellation ends at once, and then reads what is there without blocking.

A terminal, a pipe and a socket are waited on; a regular file or ``/dev/null`` never
blocks, so it is read directly. On Windows (no waiting on a file descriptor there)
``input()`` runs in a worker thread that a cancellation abandons.
"""

from __future__ import annotations

import codecs
import os
import sys
from typing import TextIO

import anyio
import anyio.to_thread

__all__ = ["StdinLines"]

_CHUNK = 65536


class StdinLines:
    """The lines of ``stream`` (standard input by default), one per :meth:`readline`.

    Example:
        >>> lines = StdinLines()
        >>> while (line := await lines.readline()) is not None:
        ...     print(line.upper())
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdin
        self._fd = self._stream.fileno()
        encoding = getattr(self._stream, "encoding", None) or "utf-8"
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._buffer = ""
        self._ended = False
        self._wait = os.name != "nt"

    async def readline(self) -> str | None:
        """The next line without its line ending; ``None`` at the end of input."""
        if os.name == "nt":  # pragma: no cover - no waiting on a descriptor there
            line = await anyio.to_thread.run_sync(self._stream.readline, abandon_on_cancel=True)
            return line.rstrip("\r\n") if line else None
        while "\n" not in self._buffer:
            if self._ended:
                rest, self._buffer = self._buffer, ""
                return rest or None
            await self._readable()
            chunk = os.read(self._fd, _CHUNK)
            self._buffer += self._decoder.decode(chunk, final=not chunk)
            self._ended = not chunk
        line, _, self._buffer = self._buffer.partition("\n")
        return line.removesuffix("\r")

    async def _readable(self) -> None:
        if not self._wait:
            return
        try:
            await anyio.wait_readable(self._fd)
        except OSError:  # a regular file or /dev/null: the event loop cannot wait on it
            self._wait = False
