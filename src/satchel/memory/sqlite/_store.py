"""The embedded :class:`SQLiteStore`: :class:`~satchel.memory.GatedStore` on a
:class:`~satchel.memory.sqlite._backend.SQLiteBackend`, built from a path."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import anyio.to_thread

from satchel.db.sqlite import default_path
from satchel.embed import Embedder
from satchel.memory._gated import GatedStore
from satchel.memory._permissions import ConsentHandler
from satchel.memory.sqlite._backend import SQLiteBackend
from satchel.memory.sqlite._db import Durability
from satchel.retrieval import DEFAULT_HYBRID_FUSION, HybridFusion

__all__ = ["SQLiteStore", "default_path"]


class SQLiteStore(GatedStore):
    """The embedded memory store: one SQLite file, WAL, FTS5 BM25 and a vector index,
    behind the permission gate.

    Implements :class:`~satchel.memory.MemoryStore`. Safe to share between tasks and
    threads of one process, and between processes on one machine (SQLite's locking).

    Args:
        path: The database file; defaults to :func:`default_path`. ``":memory:"`` is not
            supported (readers need a shared file); use a temporary file.
        embedder: The embedding model: ``"default"`` for satchel's local
            all-MiniLM-L6-v2 (loaded on first use), any :class:`~satchel.embed.Embedder`,
            or ``None`` for BM25-only search.
        consent: Asked when a write needs consent (see
            :mod:`satchel.memory._permissions`); ``None`` makes such writes raise
            :class:`~satchel.ConsentRequiredError`.
        char_limit_mode: ``hard`` refuses a write past a block's ``char_limit``;
            ``soft`` accepts it and logs a warning.
        fusion: How hybrid search combines BM25 and vectors.
        durability: ``normal`` or ``full`` (see :class:`.Database`).
        busy_timeout: Seconds to wait for another process's write lock.

    Example:
        >>> async with SQLiteStore("memory.db", embedder=None) as store:  # doctest: +SKIP
        ...     await store.create_block("ada", "persona", "I am Ada.")
    """

    backend: SQLiteBackend

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        embedder: Embedder | Literal["default"] | None = "default",
        consent: ConsentHandler | None = None,
        char_limit_mode: Literal["hard", "soft"] = "hard",
        fusion: HybridFusion = DEFAULT_HYBRID_FUSION,
        durability: Durability = "normal",
        busy_timeout: float = 10.0,
    ) -> None:
        backend = SQLiteBackend(
            Path(path) if path is not None else default_path(),
            durability=durability,
            busy_timeout=busy_timeout,
        )
        try:
            super().__init__(
                backend,
                embedder=embedder,
                consent=consent,
                char_limit_mode=char_limit_mode,
                fusion=fusion,
            )
        except BaseException:
            backend.close_now()
            raise

    @classmethod
    async def open(cls, path: str | Path | None = None, **options: Any) -> SQLiteStore:
        """Open a store without blocking the event loop (same arguments as the class)."""
        return await anyio.to_thread.run_sync(lambda: cls(path, **options))

    @property
    def path(self) -> Path:
        """The database file."""
        return self.backend.path

    @property
    def applied_migrations(self) -> list[str]:
        """The migrations this store applied when it opened the file (usually none)."""
        return self.backend.applied_migrations
