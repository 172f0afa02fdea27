"""What satchel's MCP server and its mount client agree on beyond the MCP spec."""

from typing import Final

__all__ = ["ERROR_META_KEY"]

ERROR_META_KEY: Final = "satchel/error"
"""The ``_meta`` key of an ``isError`` tool result that carries satchel's structured
error (kind, message, details), so a mounted satchel's errors keep their kind."""
