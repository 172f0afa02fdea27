"""What satchel's MCP server and its mount client agree on beyond the MCP spec."""

from typing import Final

__all__ = [
    "ALL_VERSIONS_META_KEY",
    "ERROR_META_KEY",
    "NAME_META_KEY",
    "NOTICE_META_KEY",
    "VERSION_META_KEY",
]

ERROR_META_KEY: Final = "satchel/error"
"""The ``_meta`` key of an ``isError`` tool result that carries satchel's structured
error (kind, message, details), so a mounted satchel's errors keep their kind."""

NOTICE_META_KEY: Final = "satchel/notice"
"""The ``_meta`` key of a tool result that carries a notice for the model (a deprecated
tool version's), besides the notice at the end of the text."""

VERSION_META_KEY: Final = "satchel/version"
"""The ``_meta`` key of a listed tool's version (with ``satchel/versions``, every
version the server has, and ``satchel/deprecated``); a mount keeps it."""

ALL_VERSIONS_META_KEY: Final = "satchel/all_versions"
"""The ``_meta`` key a ``tools/list`` request sets to ``true`` to list every version of
a versioned tool, not only the one its bare name calls: a mount asks for them, so
``prefix_name@1`` works through it."""

NAME_META_KEY: Final = "satchel/name"
"""The ``_meta`` key of a listed older version (``convert_v1``): the tool's own name
(``convert``), whose version it is."""
