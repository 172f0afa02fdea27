"""The backends satchel ships, registered before any other. Each names its stores by
import path, so nothing here imports them (nor psycopg)."""

from __future__ import annotations

from satchel.db._backend import DatabaseBackend
from satchel.db.sqlite._location import sqlite_location

__all__ = ["BUILTIN"]

BUILTIN = (
    DatabaseBackend(
        name="sqlite",
        schemes=("sqlite",),
        example="a sqlite:/// URL",
        components={
            "memory": "satchel.memory.sqlite:SQLiteStore.open",
            "approvals": "satchel.consent._sqlite:SQLiteApprovalStore",
            "usage": "satchel.meta._usage_sqlite:SQLiteUsageStore",
            "up": "satchel.up._ledger_sqlite:SQLiteUpLedger",
        },
        locate=sqlite_location,
    ),
    DatabaseBackend(
        name="postgresql",
        schemes=("postgresql", "postgres"),
        example="a postgresql:// URL",
        components={
            "memory": "satchel.memory.postgres:PostgresStore.open",
            "approvals": "satchel.consent._postgres:PostgresApprovalStore",
            "usage": "satchel.meta._usage_postgres:PostgresUsageStore",
            "up": "satchel.up._ledger_postgres:PostgresUpLedger",
        },
    ),
)
"""SQLite (file paths and ``sqlite:///`` URLs) and PostgreSQL."""
