"""Ctrl-C for the commands that run an agent (``satchel run``, ``satchel chat``).

How a Ctrl-C stops them: ``anyio.run`` turns SIGINT into a cancellation of the main
task, so every ``await`` under way (a model's answer, a tool, the ``you>`` prompt, which
reads standard input on the event loop rather than in a worker thread: see
:mod:`satchel.cli._stdin`) ends at once, the agent records the turn as interrupted,
the store and the model's connections close in order, and ``anyio.run`` then raises
:class:`KeyboardInterrupt`. :func:`stops_on_ctrl_c` turns that into one line on stderr
and exit status 130 (128 + SIGINT, what a shell reports), never a traceback.

A synchronous tool still running in a worker thread cannot be stopped from Python; the
turn no longer waits for it, and the process leaves without waiting either (a thread
that is not a daemon would otherwise hold the interpreter's exit until it finished).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Generator
from contextlib import contextmanager

import typer

__all__ = ["INTERRUPTED_STATUS", "stops_on_ctrl_c"]

INTERRUPTED_STATUS = 130
"""The exit status after Ctrl-C: 128 + SIGINT."""


@contextmanager
def stops_on_ctrl_c(*, newline: bool = False) -> Generator[None]:
    """Turn a :class:`KeyboardInterrupt` in the block into ``satchel: interrupted.`` on
    stderr and exit status 130.

    Args:
        newline: End the current line of standard output first (an interactive
            session, whose prompt or half-streamed reply is still on it).

    Raises:
        typer.Exit: with status 130, after Ctrl-C.
    """
    try:
        yield
    except KeyboardInterrupt:
        if newline:
            typer.echo("")
        typer.echo("satchel: interrupted.", err=True)
        if _threads_left():
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(INTERRUPTED_STATUS)
        raise typer.Exit(INTERRUPTED_STATUS) from None


def _threads_left() -> bool:
    """Whether a thread that Python would wait for at exit is still running (a
    synchronous tool the interrupted turn left behind)."""
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())
