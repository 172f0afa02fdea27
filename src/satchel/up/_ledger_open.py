"""Opening the host's ledger on the database a target names, through the one URL
switch (:func:`satchel.db.open_database`)."""

from __future__ import annotations

from pathlib import Path

from satchel.db import Database, open_database
from satchel.up._ledger import UpLedger

__all__ = ["open_ledger"]


def open_ledger(target: str | Path | Database | None) -> UpLedger:
    """The :class:`~satchel.up.UpLedger` of the database ``target`` names: a SQLite
    file, or a ``postgresql://`` URL (its driver imported only then).

    Raises:
        InvalidInputError: A scheme no backend serves.
        StorageError: The backend keeps no ledger.

    Example:
        >>> ledger = open_ledger("~/.local/share/satchel/satchel.db")
    """
    database = open_database(target)
    ledger: UpLedger = database.component("up")(database.location)
    return ledger
