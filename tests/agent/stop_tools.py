"""A tool that runs until the process ends, and a scripted model that calls it, for the
Ctrl-C tests of ``satchel run`` and ``satchel chat``: the tool prints a line when it
starts, so a test knows when to press Ctrl-C."""

import sys
import threading

from satchel import ToolRegistry, tool
from satchel.agent import TestModel, call


@tool
def nap(minutes: int) -> str:
    """Wait (a long-running synchronous tool).

    Args:
        minutes: How long.
    """
    print("nap started", file=sys.stderr, flush=True)
    threading.Event().wait(minutes * 60)
    return "rested"


registry = ToolRegistry([nap])


def napper() -> TestModel:
    """The script: call ``nap`` for ten minutes, then reply."""
    return TestModel([call("nap", {"minutes": 10}, id="call_nap"), "Rested."])
