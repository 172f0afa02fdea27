"""The one memory store: :class:`GatedStore`, the policy in front of any backend.

A :class:`~satchel.memory.MemoryBackend` supplies the database steps (each one read,
one write transaction or one statement); :class:`GatedStore` wraps one and does
everything else, once for every backend: argument checks, the permission gate
(DESIGN §4's table, asking the consent handler) with its retry loop
(:mod:`satchel.memory._gate`), the reasons a consent handler is shown, the char-limit
mode, embedding (:class:`~satchel.memory._vector_upkeep.VectorUpkeep`), preparing a
search, and paging export and import (:mod:`satchel.memory._transfer`). So a backend
that implements only the steps still gets the gate and consent; it cannot skip them.

What stays with each backend is what really differs: connecting and closing,
migrations, the SQL, and how a write re-checks the level the gate allowed (SQLite
inside the write transaction, PostgreSQL in the writing statement).

The class is written in four modules: this one (construction, block reads and
settings, search, export and import), :mod:`satchel.memory._gated_writes` (the gated
block writes), :mod:`satchel.memory._gated_operator` (the operator's edit and delete,
past the gate) and :mod:`satchel.memory._gated_agents` (agent set-up and messages),
whose classes are its bases and hold no state of their own.
"""

from __future__ import annotations

from collections.abc import (
    AsyncIterator,
    Collection,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self

from satchel._errors import (
    InvalidInputError,
    PermissionDeniedError,
)
from satchel.embed import Embedder, default_embedder
from satchel.memory._backend import MemoryBackend, NewBlock
from satchel.memory._context_lines import ContextLines
from satchel.memory._context_window import DEFAULT_NEIGHBOURS, Neighbours
from satchel.memory._gated_agents import AgentsAndMessages
from satchel.memory._gated_operator import OperatorWrites
from satchel.memory._gated_writes import GatedWrites
from satchel.memory._history import BlockVersion, HistoryBackend
from satchel.memory._models import (
    UNSET,
    Block,
    BlockKind,
    Domain,
    ImportReport,
    Message,
    OnConflict,
    Permission,
    SearchFilters,
    SearchHit,
    SearchMode,
    Unset,
    check_id,
    normalise_tags,
    validate_agent,
    validate_label,
)
from satchel.memory._paging import BlockPage, check_kinds, check_page
from satchel.memory._permissions import ConsentHandler
from satchel.memory._protocol import MemoryStore, ProgressCallback
from satchel.memory._search import SearchRequest, plan_search
from satchel.memory._transfer import export_records, import_records
from satchel.memory._vector_upkeep import VectorUpkeep
from satchel.retrieval import DEFAULT_HYBRID_FUSION, HybridFusion, query_terms

__all__ = ["GatedStore"]


class GatedStore(GatedWrites, OperatorWrites, AgentsAndMessages):
    """A :class:`~satchel.memory.MemoryStore` made of a backend and the policy in
    front of it; see the module docstring.

    :class:`~satchel.memory.SQLiteStore` and
    :class:`~satchel.memory.postgres.PostgresStore` are gated stores on satchel's two
    backends; wrap your own :class:`~satchel.memory.MemoryBackend` directly.

    Args:
        backend: The database steps.
        embedder: The embedding model: ``"default"`` for satchel's local model, any
            :class:`~satchel.embed.Embedder`, or ``None`` for BM25-only search.
        consent: Asked when a write needs consent (see
            :mod:`satchel.memory._permissions`); ``None`` makes such writes raise
            :class:`~satchel.ConsentRequiredError`.
        char_limit_mode: ``hard`` refuses a write past a block's ``char_limit``;
            ``soft`` accepts it and logs a warning.
        fusion: How hybrid search combines full-text and vector scores.

    Example:
        >>> store = GatedStore(MyBackend(), embedder=None, consent=broker)  # doctest: +SKIP
        >>> await store.append_to_block("ada", "human", "Likes tea.")  # doctest: +SKIP
    """

    def __init__(
        self,
        backend: MemoryBackend,
        *,
        embedder: Embedder | Literal["default"] | None = "default",
        consent: ConsentHandler | None = None,
        char_limit_mode: Literal["hard", "soft"] = "hard",
        fusion: HybridFusion = DEFAULT_HYBRID_FUSION,
    ) -> None:
        if embedder == "default":
            embedder = default_embedder()
        self.backend = backend
        self.embedder: Embedder | None = embedder
        self.consent = consent
        self.hard_limit = char_limit_mode == "hard"
        self.fusion = fusion
        self.neighbours: Neighbours = DEFAULT_NEIGHBOURS
        """How much a query term only a neighbouring entry holds counts in coverage
        fusion (:class:`Neighbours`; :data:`NO_NEIGHBOURS` turns it off)."""
        if embedder is None:
            backend.use_model(None, None)
        else:
            backend.use_model(f"{embedder.name}:{embedder.dim}", embedder.dim)
        self._vectors = VectorUpkeep(backend, embedder)
        self._lines = ContextLines()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the backend's connections. Idempotent."""
        await self.backend.close()

    # --- blocks --------------------------------------------------------------------

    async def create_block(
        self,
        agent: str,
        label: str,
        value: str = "",
        *,
        description: str = "",
        kind: BlockKind = BlockKind.CORE,
        permission: Permission = Permission.READ_WRITE,
        char_limit: int | None = None,
        pinned: bool = False,
        tags: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.create_block`."""
        validate_agent(agent)
        validate_label(label)
        clean_tags = normalise_tags(tags)
        kind, permission = BlockKind(kind), Permission(permission)
        new = NewBlock(
            agent=agent,
            label=label,
            value=value,
            description=description,
            kind=kind,
            permission=permission,
            char_limit=char_limit,
            pinned=pinned,
            tags=clean_tags,
            metadata=metadata,
            hard_limit=self.hard_limit,
        )
        return await self.backend.insert_block(new, await self._vectors.embed_one(value))

    async def get_block(self, agent: str, label: str) -> Block:
        """See :meth:`MemoryStore.get_block`."""
        validate_agent(agent)
        [(_, block)] = await self.backend.resolve(agent, [label])
        return block

    async def get_block_by_id(self, agent: str, block_id: str) -> Block:
        """See :meth:`MemoryStore.get_block_by_id`."""
        validate_agent(agent)
        return await self.backend.resolve_id(agent, check_id(block_id))

    async def list_blocks(
        self, agent: str, kinds: Collection[BlockKind] | None = None
    ) -> list[Block]:
        """See :meth:`MemoryStore.list_blocks`."""
        validate_agent(agent)
        return await self.backend.list_visible(agent, kinds)

    async def list_blocks_page(
        self,
        agent: str,
        *,
        kinds: Collection[BlockKind] | None = None,
        offset: int = 0,
        limit: int = 100,
    ) -> BlockPage:
        """See :meth:`MemoryStore.list_blocks_page`."""
        validate_agent(agent)
        offset, limit = check_page(offset, limit)
        chosen = check_kinds(kinds)
        blocks, total = await self.backend.list_visible_page(agent, chosen, offset, limit)
        return BlockPage(blocks=blocks, total=total, offset=offset, limit=limit)

    async def block_history(self, agent: str, label: str) -> list[BlockVersion]:
        """The earlier versions of a block ``agent`` can read, oldest first (the last
        :data:`~satchel.memory.HISTORY_VERSIONS` kept; empty on a backend that keeps
        no history). The current version is :meth:`get_block`'s. Not part of the
        :class:`~satchel.memory.MemoryStore` protocol: an operator's view.

        Raises:
            NotFoundError: No such block visible to ``agent``.
        """
        block = await self.get_block(agent, label)
        if not isinstance(self.backend, HistoryBackend):
            return []
        return await self.backend.block_history(block.id)

    async def configure_block(
        self,
        agent: str,
        label: str,
        *,
        permission: Permission | None = None,
        char_limit: int | Unset | None = UNSET,
        description: str | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.configure_block`."""
        validate_agent(agent)
        if permission is not None:
            permission = Permission(permission)
        if not isinstance(char_limit, Unset) and char_limit is not None and char_limit < 0:
            raise InvalidInputError("char_limit must be >= 0")
        [(pk, block)] = await self.backend.resolve(agent, [label])
        if block.agent != agent:
            raise PermissionDeniedError(
                f"only the owner {block.agent!r} may configure block {block.label!r}",
                details={"label": block.label, "owner": block.agent, "operation": "configure"},
            )
        if permission is None and isinstance(char_limit, Unset) and description is None:
            return block
        return await self.backend.configure(
            agent, pk, permission=permission, char_limit=char_limit, description=description
        )

    # --- search --------------------------------------------------------------------

    async def search(
        self,
        agent: str,
        query: str,
        *,
        domains: Domain = Domain.ALL,
        filters: SearchFilters | None = None,
        limit: int = 10,
        mode: SearchMode = "hybrid",
    ) -> list[SearchHit]:
        """See :meth:`MemoryStore.search`."""
        validate_agent(agent)
        if not 1 <= limit <= 1000:
            raise InvalidInputError("limit must be between 1 and 1000")
        filters = filters or SearchFilters()
        plan = plan_search(Domain(domains), filters)
        vector = await self._vectors.embed_one(query.strip()) if mode != "bm25" else None
        request = SearchRequest(
            agent=agent,
            terms=query_terms(query),
            query_vector=vector,
            plan=replace(plan, context=False),  # lines of core and working blocks: below
            filters=filters,
            limit=limit,
            mode=mode,
            fusion=self.fusion,
            neighbours=self.neighbours,
        )
        hits = await self.backend.search(request) if plan.blocks or plan.messages else []
        if not plan.context:
            return hits
        blocks = await self.backend.list_visible(agent, (BlockKind.CORE, BlockKind.WORKING))
        lines = await self._lines.search(
            agent,
            blocks,
            query,
            vector,
            self._vectors.active,
            filters=filters,
            mode=mode,
            vector_weight=self.fusion.vector_weight,
        )
        if mode == "bm25" and hits:  # coverage in [0, 1] beside raw BM25 scores
            top = max(1.0, hits[0].score)
            lines = [h.model_copy(update={"score": h.score * top}) for h in lines]
        return sorted([*hits, *lines], key=lambda h: -h.score)[:limit]

    # --- maintenance, export and import -------------------------------------------

    async def reembed(
        self, *, progress: ProgressCallback | None = None, batch_size: int = 64
    ) -> int:
        """See :meth:`MemoryStore.reembed`. Re-embeds everything, and adopts the current
        embedder for a database that held another model's vectors."""
        return await self._vectors.reembed(progress, batch_size)

    async def list_agents(self) -> list[str]:
        """See :meth:`MemoryStore.list_agents`."""
        return await self.backend.agents()

    def export_records(self, agent: str | None = None) -> AsyncIterator[Block | Message]:
        """See :meth:`MemoryStore.export_records`. Reads in pages of 500; nothing is held
        open between pages."""
        return export_records(self.backend, agent)

    async def import_records(
        self,
        records: Iterable[Block | Message],
        *,
        on_conflict: OnConflict = "error",
        batch_size: int = 500,
    ) -> ImportReport:
        """See :meth:`MemoryStore.import_records` (no permission gate: an operator's
        restore; the records' own shares are checked against the gate's rule, and a
        value over its ``char_limit`` against the store's ``char_limit_mode``)."""
        return await import_records(
            self.backend,
            self._vectors.active,
            records,
            on_conflict=on_conflict,
            batch_size=batch_size,
            hard_limit=self.hard_limit,
        )


if TYPE_CHECKING:  # the type checker proves GatedStore implements the protocol
    _implements: type[MemoryStore] = GatedStore
