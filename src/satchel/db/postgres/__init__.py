"""PostgreSQL in satchel's storage layer: the connection helpers every PostgreSQL
store shares and the pooled, migrated database of the small stores (approvals,
learned pairs). Importing this package imports psycopg."""

from satchel.db.postgres._connect import Conn, describe, redact
from satchel.db.postgres._pool import PostgresPool

__all__ = ["Conn", "PostgresPool", "describe", "redact"]
