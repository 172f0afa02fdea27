"""Ctrl-C for the commands that run an agent (``satchel run``, ``satchel chat``).

How a Ctrl-C stops them: while the agent works (:func:`cancelled_by_ctrl_c`), SIGINT
cancels that work through an anyio cancel scope (the handler is the event loop's:
the CLI runs on asyncio), so every ``await`` under way (a
model's answer, a tool, the ``you>`` prompt, which reads standard input on the event
loop rather than in a worker thread: see :mod:`satchel.cli._stdin`) ends at once and
the agent records the turn as interrupted. Then the store, the approval broker and
the model's connections close as on any other exit, and :class:`KeyboardInterrupt`
leaves ``anyio.run``; :func:`stops_on_ctrl_c` turns it into one line on stderr and exit
status 130 (128 + SIGINT, what a shell reports), never a traceback. A second Ctrl-C
while that winds down leaves at once.

Why a scope of its own rather than ``anyio.run``'s SIGINT handling (which cancels the
main task natively): that cancellation ends in :class:`KeyboardInterrupt` only when the
task's cancel requests balance out, and the anyio task groups on the way (the
approval broker's, the HTTP client's) can leave them unbalanced, so the run sometimes
ended in ``CancelledError`` and a traceback instead. It still covers the moments
outside the scope (opening the store, closing it), and :func:`stops_on_ctrl_c` reads
either ending as Ctrl-C.

Once the line is printed the process ends with ``os._exit``: by then the turn is
recorded and the store closed, and what the interpreter would still do is its own
teardown, which took a second or more on a loaded machine (freeing the modules, a
loaded embedding model) and waits for every thread that is not a daemon. A synchronous
tool still running in a worker thread cannot be stopped from Python; the turn no longer
waits for it, and so neither does the exit.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncGenerator, Generator
from contextlib import asynccontextmanager, contextmanager
from typing import NoReturn

import anyio
import typer

__all__ = ["INTERRUPTED_STATUS", "cancelled_by_ctrl_c", "stops_on_ctrl_c"]

INTERRUPTED_STATUS = 130
"""The exit status after Ctrl-C: 128 + SIGINT."""

_LINE = "satchel: interrupted."


@contextmanager
def stops_on_ctrl_c(*, newline: bool = False) -> Generator[None]:
    """End the process after Ctrl-C in the block (a :class:`KeyboardInterrupt`, or the
    main task's cancellation leaving ``anyio.run``): ``satchel: interrupted.`` on
    stderr, exit status 130, at once (see the module docstring).

    Args:
        newline: End the current line of standard output first (an interactive
            session, whose prompt or half-streamed reply is still on it).
    """
    try:
        yield
    except (KeyboardInterrupt, asyncio.CancelledError):
        if newline:
            typer.echo("")
        typer.echo(_LINE, err=True)
        _leave()


@asynccontextmanager
async def cancelled_by_ctrl_c() -> AsyncGenerator[None]:
    """Run the block until it ends or Ctrl-C (SIGINT) cancels it; after Ctrl-C, raise
    :class:`KeyboardInterrupt` once the block has unwound. A second Ctrl-C leaves the
    process at once. Where the event loop cannot take signals (Windows, a thread other
    than the main one), the block runs as it is and ``anyio.run``'s handling applies.

    The block's own exceptions pass through unchanged (no task group wraps it).

    Raises:
        KeyboardInterrupt: Ctrl-C cancelled the block.
    """
    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGINT)
    presses = 0
    with anyio.CancelScope() as work:

        def pressed() -> None:
            nonlocal presses
            presses += 1
            if presses > 1:  # the second Ctrl-C: no more waiting
                typer.echo(_LINE, err=True)
                _leave()
            work.cancel()

        try:
            loop.add_signal_handler(signal.SIGINT, pressed)
            installed = True
        except (NotImplementedError, RuntimeError, ValueError):  # no signals here
            installed = False
        try:
            yield
        finally:
            if installed:
                loop.remove_signal_handler(signal.SIGINT)
                signal.signal(signal.SIGINT, previous or signal.default_int_handler)
    if presses:
        raise KeyboardInterrupt


def _leave() -> NoReturn:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(INTERRUPTED_STATUS)
