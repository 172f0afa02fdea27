"""The PostgreSQL :class:`PostgresStore`: :class:`~satchel.memory.GatedStore` on a
:class:`~satchel.memory.postgres._backend.PostgresBackend`, built from a URL."""

from __future__ import annotations

from typing import Any, Literal, Self

import anyio.to_thread

from satchel.embed import Embedder
from satchel.memory._gated import GatedStore
from satchel.memory._permissions import ConsentHandler
from satchel.memory.postgres._backend import PostgresBackend
from satchel.retrieval import DEFAULT_HYBRID_FUSION, HybridFusion

__all__ = ["PostgresStore"]


class PostgresStore(GatedStore):
    """Memory on PostgreSQL, shared by any number of processes on any machines.

    Implements :class:`~satchel.memory.MemoryStore` with the same semantics, errors,
    permission gate and consent as :class:`~satchel.memory.SQLiteStore` (both are a
    :class:`~satchel.memory.GatedStore`); full-text search uses ``tsvector`` (GIN),
    vector search pgvector (HNSW, cosine), fused the same way. The server needs pgvector
    (``CREATE EXTENSION vector``, done on first open when the user may). Create with
    :meth:`open`, or use ``async with``.

    Args:
        url: A ``postgresql://`` URL or libpq connection string.
        embedder: The embedding model: ``"default"`` for satchel's local
            all-MiniLM-L6-v2 (loaded on first use), any :class:`~satchel.embed.Embedder`,
            or ``None`` for BM25-only search.
        consent: Asked when a write needs consent; ``None`` makes such writes raise
            :class:`~satchel.ConsentRequiredError`.
        char_limit_mode: ``hard`` refuses a write past a block's ``char_limit``;
            ``soft`` accepts it and logs a warning.
        fusion: How hybrid search combines full-text and vector scores.
        min_connections: Connections the pool keeps open.
        max_connections: At most this many connections at once.
        timeout: Seconds to wait to connect or for a free pooled connection.
        connect_kwargs: Extra arguments for :func:`psycopg.AsyncConnection.connect`
            (e.g. ``{"prepare_threshold": None}`` behind PgBouncer).

    Example:
        >>> async with await PostgresStore.open(  # doctest: +SKIP
        ...     "postgresql://localhost/satchel", embedder=None
        ... ) as store:
        ...     await store.create_block("ada", "persona", "I am Ada.")
    """

    backend: PostgresBackend

    def __init__(
        self,
        url: str,
        *,
        embedder: Embedder | Literal["default"] | None = "default",
        consent: ConsentHandler | None = None,
        char_limit_mode: Literal["hard", "soft"] = "hard",
        fusion: HybridFusion = DEFAULT_HYBRID_FUSION,
        min_connections: int = 1,
        max_connections: int = 10,
        timeout: float = 30.0,
        connect_kwargs: dict[str, Any] | None = None,
    ) -> None:
        backend = PostgresBackend(
            url,
            min_connections=min_connections,
            max_connections=max_connections,
            timeout=timeout,
            connect_kwargs=connect_kwargs,
        )
        super().__init__(
            backend,
            embedder=embedder,
            consent=consent,
            char_limit_mode=char_limit_mode,
            fusion=fusion,
        )

    @classmethod
    async def open(cls, url: str, **options: Any) -> PostgresStore:
        """Connect, create the extensions and apply pending migrations, claim the
        database for the embedder, and open the pool (same arguments as the class).

        Raises:
            StorageError: The server cannot be reached, or lacks pgvector (the message
                says how to install it).
        """
        embedder = options.get("embedder")
        if embedder is not None and embedder != "default":  # a provider may ask its server
            await anyio.to_thread.run_sync(lambda: embedder.dim)
        store = cls(url, **options)
        await store.setup()
        return store

    async def setup(self) -> None:
        """Do what :meth:`open` does, for a store built with the constructor.
        Idempotent."""
        await self.backend.setup()

    async def __aenter__(self) -> Self:
        await self.setup()
        return self

    @property
    def applied_migrations(self) -> list[str]:
        """The migrations this store applied when it opened the database (usually
        none)."""
        return self.backend.applied_migrations

    def __repr__(self) -> str:
        return f"PostgresStore({self.backend.safe_url!r})"
