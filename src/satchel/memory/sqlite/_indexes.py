"""The SQLite store's vector indexes, persisted beside the database and kept in step.

One :class:`~satchel.retrieval.AnnIndex` per domain (blocks, messages) lives in memory
and is saved under ``<database>.vectors/``: ``manifest.json`` names the two index files
and the **watermark** they hold, and is replaced atomically after the files are
written, so a crash at any moment leaves the previous consistent set.

The watermark is the database's own change log: ``embeddings.seq`` and
``embedding_deletes.seq`` only grow (``AUTOINCREMENT``) and are written in the same
transaction as the vectors they log, so "rows with ``seq`` above the watermark" is
exactly what the saved files lack. On first use a process

1. maps the saved files into memory (:meth:`~satchel.retrieval.AnnIndex.load` with
   ``view``: constant time at any size; the first change copies an index into memory)
   if the manifest belongs to this database (a random id kept in
   its ``meta`` table), has the same width, and its watermark is not ahead of the
   database (a restored older file or another database means a rebuild);
2. applies the removals and then the additions logged since the watermark (removals
   first: the ``embeddings`` table holds only current vectors);
3. checks each index's size against its domain's vector count (the ``vector_counts``
   table, kept by triggers: no scan of the table) and, if they differ, repairs it by
   set difference (adds what is missing, drops what is extra);
4. saves again if that replayed or repaired much.

Later searches apply the log since the last one (cheap; a mapped index keeps them in
its overlay, see :class:`~satchel.retrieval.AnnIndex`), and the index is saved when
many changes are unsaved and when the store closes, unless the indexes are still mapped
and fewer than :data:`_REPLAY_CHEAP` changes are unsaved: saving would copy a mapped
index into memory (seconds at a million entries) to spare the next process a replay
of a few rows. A process killed at any point
therefore costs only a replay of what it had not saved, and no search ever sees a
deleted row: the log is applied in the same read snapshot as the search.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import sys
import threading
import uuid
from collections.abc import Generator
from pathlib import Path

import numpy as np

from satchel._errors import StorageError
from satchel.memory.sqlite._messages import BLOCKS, MESSAGES
from satchel.retrieval import AnnIndex

__all__ = ["StoredIndexes", "index_folder"]

logger = logging.getLogger("satchel.memory")

_FORMAT = 1
_DOMAINS = (BLOCKS, MESSAGES)
_BATCH = 65_536
_REPLAY_CHEAP = 1_000
"""Fewer unsaved changes than this are left to the log rather than saved from a mapped
index (at close) or saved after replaying them (at open)."""


def index_folder(database: Path) -> Path:
    """Where the vector index of ``database`` is saved: ``<database>.vectors/``."""
    return database.with_name(f"{database.name}.vectors")


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Generator[None]:
    """An exclusive lock between processes saving or loading the same folder (POSIX;
    elsewhere file names unique per save keep loads consistent)."""
    if sys.platform == "win32":
        yield
        return
    import fcntl

    with open(folder / "lock", "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _sequence(conn: sqlite3.Connection, table: str) -> int:
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone()
    return int(row[0]) if row else 0


class StoredIndexes:
    """One :class:`~satchel.retrieval.AnnIndex` per domain (see the module docstring).

    Args:
        dim: Vector width.
        folder: Where to persist, or ``None`` to keep the index in memory only.
        database_id: The database's random id (its ``meta.vector_index_id``).
        save_every: Unsaved changes that trigger a save during a search.
    """

    def __init__(
        self, dim: int, folder: Path | None, database_id: str, *, save_every: int = 50_000
    ) -> None:
        self.dim = dim
        self.folder = folder
        self.database_id = database_id
        self.save_every = save_every
        self.indexes = {domain: AnnIndex(dim) for domain in _DOMAINS}
        self._added = 0
        self._removed = 0
        self._unsaved = 0
        self._ready = False
        self._lock = threading.Lock()

    # --- the public steps --------------------------------------------------------

    def sync(self, conn: sqlite3.Connection) -> None:
        """Catch up with the database (``conn`` is inside a read transaction)."""
        with self._lock:
            if not self._ready:
                self._open(conn)
                self._ready = True
                return
            self._catch_up(conn)
            size = sum(len(index) for index in self.indexes.values())
            if self._unsaved >= max(self.save_every, size // 10):
                self._save_quietly()

    def save(self) -> None:
        """Save now if anything is unsaved (for a store closing), except a few changes
        over mapped indexes (the module docstring says why)."""
        with self._lock:
            if not self._ready or not self._unsaved:
                return
            mapped = all(index.viewed for index in self.indexes.values())
            if mapped and self._unsaved < _REPLAY_CHEAP:
                return
            self._save_quietly()

    # --- opening -----------------------------------------------------------------

    def _open(self, conn: sqlite3.Connection) -> None:
        loaded = self._load(conn)
        self._catch_up(conn)
        repaired = self._verify(conn)
        if not loaded or repaired or self._unsaved >= _REPLAY_CHEAP:
            self._save_quietly()

    def _load(self, conn: sqlite3.Connection) -> bool:
        """Load the saved files if they fit this database; else start empty."""
        added, removed = _sequence(conn, "embeddings"), _sequence(conn, "embedding_deletes")
        # An empty index has nothing to remove: replay every stored vector.
        self._added, self._removed = 0, removed
        if self.folder is None or not (self.folder / "manifest.json").exists():
            return False
        try:
            with _folder_lock(self.folder):
                manifest = json.loads((self.folder / "manifest.json").read_text("utf-8"))
                fits = (
                    manifest.get("format") == _FORMAT
                    and manifest.get("database_id") == self.database_id
                    and manifest.get("dim") == self.dim
                    and 0 <= int(manifest["added"]) <= added
                    and 0 <= int(manifest["removed"]) <= removed
                )
                if not fits:
                    logger.warning(
                        "the vector index in %s is not this database's: rebuilding", self.folder
                    )
                    return False
                indexes = {
                    domain: AnnIndex.load(
                        self.folder / manifest["files"][str(domain)], self.dim, view=True
                    )
                    for domain in _DOMAINS
                }
        except (OSError, ValueError, KeyError, TypeError, StorageError) as exc:
            logger.warning(
                "the vector index in %s is unreadable (%s): rebuilding", self.folder, exc
            )
            return False
        self.indexes = indexes
        self._added, self._removed = int(manifest["added"]), int(manifest["removed"])
        return True

    def _verify(self, conn: sqlite3.Connection) -> bool:
        """Compare each index's size with its domain's vectors; repair a mismatch.
        Returns whether anything was repaired."""
        # Kept by triggers (migration 0005_vector_counts): no scan of the table.
        counts = dict(conn.execute("SELECT domain, n FROM vector_counts").fetchall())
        repaired = False
        for domain, index in self.indexes.items():
            if len(index) == int(counts.get(domain, 0)):
                continue
            stored = np.fromiter(
                (
                    row[0]
                    for row in conn.execute(
                        "SELECT item FROM embeddings WHERE domain = ?", (domain,)
                    )
                ),
                np.int64,
            )
            held = index.ids()
            extra = np.setdiff1d(held, stored)
            missing = np.setdiff1d(stored, held)
            if not len(extra) and not len(missing):
                continue  # the count was wrong, not the index (counts are not repaired)
            logger.warning(
                "vector index (domain %d) disagreed with the database: %d missing, %d extra; "
                "repaired",
                domain,
                len(missing),
                len(extra),
            )
            index.remove(extra)
            for start in range(0, len(missing), 900):
                chunk = missing[start : start + 900].tolist()
                rows = conn.execute(
                    f"SELECT item, vec FROM embeddings WHERE domain = ? AND item IN "
                    f"({', '.join('?' * len(chunk))})",
                    (domain, *chunk),
                ).fetchall()
                self._add_rows(domain, [(int(item), vec) for item, vec in rows])
            self._unsaved += len(extra) + len(missing)
            repaired = True
        return repaired

    # --- keeping up --------------------------------------------------------------

    def _add_rows(self, domain: int, rows: list[tuple[int, bytes]]) -> None:
        size = self.dim * 4
        chosen = [(item, vec) for item, vec in rows if len(vec) == size]
        if not chosen:
            return
        vectors = np.frombuffer(b"".join(vec for _, vec in chosen), dtype=np.float32)
        ids = np.fromiter((item for item, _ in chosen), np.int64, len(chosen))
        self.indexes[domain].add(ids, vectors.reshape(len(chosen), self.dim))

    def _catch_up(self, conn: sqlite3.Connection) -> None:
        removed = conn.execute(
            "SELECT seq, domain, item FROM embedding_deletes WHERE seq > ? ORDER BY seq",
            (self._removed,),
        ).fetchall()
        for domain in _DOMAINS:
            items = [int(item) for _, d, item in removed if d == domain]
            if items:
                self.indexes[domain].remove(np.asarray(items, dtype=np.int64))
        if removed:
            self._removed = int(removed[-1][0])
            self._unsaved += len(removed)
        while True:
            rows = conn.execute(
                "SELECT seq, domain, item, vec FROM embeddings WHERE seq > ? ORDER BY seq LIMIT ?",
                (self._added, _BATCH),
            ).fetchall()
            if not rows:
                return
            self._added = int(rows[-1][0])
            self._unsaved += len(rows)
            for domain in _DOMAINS:
                self._add_rows(domain, [(int(r[2]), r[3]) for r in rows if r[1] == domain])

    # --- saving ------------------------------------------------------------------

    def _save_quietly(self) -> None:
        """Save; a failure is logged (the database stays the truth, and the next
        process replays what is unsaved)."""
        if self.folder is None:
            self._unsaved = 0
            return
        try:
            self._save(self.folder)
        except (OSError, StorageError) as exc:
            logger.warning("cannot save the vector index in %s: %s", self.folder, exc)

    def _save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        with _folder_lock(folder):
            previous: set[str] = set()
            manifest_path = folder / "manifest.json"
            with contextlib.suppress(OSError, ValueError, AttributeError):
                previous = set(json.loads(manifest_path.read_text("utf-8"))["files"].values())
            tag = uuid.uuid4().hex[:12]
            files = {str(domain): f"domain{domain}-{tag}.usearch" for domain in _DOMAINS}
            for domain, index in self.indexes.items():
                index.save(folder / files[str(domain)])
            manifest = {
                "format": _FORMAT,
                "database_id": self.database_id,
                "dim": self.dim,
                "added": self._added,
                "removed": self._removed,
                "files": files,
            }
            temporary = folder / f"manifest.json.{os.getpid()}.tmp"
            with open(temporary, "w", encoding="utf-8") as handle:
                json.dump(manifest, handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, manifest_path)
            for stale in folder.iterdir():
                # Earlier saves, and temporary files of a save that was killed.
                if stale.name in files.values() or stale.name in ("manifest.json", "lock"):
                    continue
                if stale.name in previous or stale.name.endswith((".usearch", ".tmp")):
                    with contextlib.suppress(OSError):
                        stale.unlink()
        self._unsaved = 0
