"""Tools and a scripted model for the ``satchel chat`` tests."""

import os
from pathlib import Path

from satchel import ToolRegistry, tool
from satchel.agent import TestModel, call


@tool(destructive=True)
def wipe(path: str) -> str:
    """Delete a file.

    Args:
        path: The file.
    """
    Path(path).unlink()
    return f"deleted {path}"


registry = ToolRegistry([wipe])


def chatty() -> TestModel:
    """The script: a memory edit and a reply, then a destructive call and a reply. The
    file to delete comes from ``$SATCHEL_TEST_DOOMED``."""
    doomed = os.environ["SATCHEL_TEST_DOOMED"]
    return TestModel(
        [
            call("context", {"operation": "append", "label": "human", "content": "Likes tea."}),
            "Noted: you like tea.",
            call("wipe", {"path": doomed}),
            "The file is gone.",
        ]
    )
