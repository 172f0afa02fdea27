"""A one-tool registry for ``--tools path.py:registry`` in the CLI tests."""

from satchel import ToolRegistry, tool


@tool(read_only=True)
def shout(text: str) -> str:
    """Return the text in capitals.

    Args:
        text: What to shout.
    """
    return text.upper()


registry = ToolRegistry([shout])
