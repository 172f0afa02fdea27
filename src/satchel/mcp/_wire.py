"""What satchel's MCP server and its mount client agree on beyond the MCP spec."""

from typing import Final

__all__ = ["ERROR_META_KEY", "NOTICE_META_KEY", "VERSION_META_KEY"]

ERROR_META_KEY: Final = "satchel/error"
"""The ``_meta`` key of an ``isError`` tool result that carries satchel's structured
error (kind, message, details), so a mounted satchel's errors keep their kind."""

NOTICE_META_KEY: Final = "satchel/notice"
"""The ``_meta`` key of a tool result that carries a notice for the model (a deprecated
tool version's), besides the notice at the end of the text."""

VERSION_META_KEY: Final = "satchel/version"
"""The ``_meta`` key of a listed tool's version (with ``satchel/versions``, every
version the server has, and ``satchel/deprecated``); a mount keeps it."""
