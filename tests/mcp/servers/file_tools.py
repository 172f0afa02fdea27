"""User tools for ``--tools`` in the approval tests: they touch real files, so a test can
see whether a call ran. Declared the AgenticPal way: ``delete_file`` says only
``actions=["delete"]``, which makes it destructive."""

from pathlib import Path

from satchel import ToolRegistry, tool


@tool(category="files", actions=["delete"])
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file.
    """
    Path(path).unlink()
    return f"deleted {path}"


@tool(category="files", actions=["create"])
def touch_file(path: str) -> str:
    """Create an empty file.

    Args:
        path: The file.
    """
    Path(path).touch()
    return f"created {path}"


registry = ToolRegistry([delete_file, touch_file])
