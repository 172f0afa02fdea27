"""What every PostgreSQL store of satchel shares about a connection: its type, the URL
without its password for messages, and a database error in one line.

This module imports psycopg: import it only where PostgreSQL is used.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

__all__ = ["Conn", "describe", "redact"]

Conn = psycopg.AsyncConnection[tuple[Any, ...]]
"""An async psycopg connection whose rows are tuples."""


def redact(url: str) -> str:
    """``url`` without its password, for messages."""
    try:
        params = conninfo_to_dict(url)
    except psycopg.Error:
        return "<unparsable connection string>"
    params.pop("password", None)
    host, db = params.get("host", "localhost"), params.get("dbname", "")
    port = params.get("port")
    return f"postgresql://{params.get('user', '')}@{host}{f':{port}' if port else ''}/{db}"


def describe(exc: BaseException) -> str:
    """A one-line description of a database error."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
