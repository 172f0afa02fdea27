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

The store is composed, not stacked: this module keeps construction, block reads and
settings, search, export and import, and the store holds three parts that share its
backend, embedding upkeep and write policy (:class:`~._gated_writes.WriteRules`):
:class:`~._gated_writes.GatedWrites` (the gated block writes),
:class:`~._gated_operator.OperatorWrites` (the operator's edit and delete, past the
gate) and :class:`~._gated_agents.AgentsAndMessages` (agent set-up and messages); the
store's methods for those delegate to them.
"""

from __future__ import annotations

import logging
from collections.abc import (
    AsyncIterator,
    Collection,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import replace
from datetime import datetime
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self

import numpy as np
import numpy.typing as npt

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
from satchel.memory._gated_writes import GatedWrites, WriteRules
from satchel.memory._history import BlockVersion, HistoryBackend
from satchel.memory._merge import MergeReport
from satchel.memory._models import (
    UNSET,
    AgentSummary,
    Block,
    BlockKind,
    Domain,
    ImportReport,
    Message,
    OnConflict,
    Permission,
    Role,
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
from satchel.memory._permissions import ConsentHandler, RequestOrigin
from satchel.memory._protocol import MemoryStore, ProgressCallback
from satchel.memory._search import SearchRequest, SearchResults, plan_search
from satchel.memory._template import AgentTemplate
from satchel.memory._transfer import export_records, import_records
from satchel.memory._vector_upkeep import VectorUpkeep
from satchel.retrieval import DEFAULT_HYBRID_FUSION, HybridFusion, query_terms

__all__ = ["GatedStore"]

logger = logging.getLogger("satchel.memory")

F32 = npt.NDArray[np.float32]


class GatedStore:
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
        self._rules = WriteRules(consent=consent, hard_limit=char_limit_mode == "hard")
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
        self._writes = GatedWrites(backend, self._vectors, self._rules)
        self._operator = OperatorWrites(backend, self._vectors)
        self._agents = AgentsAndMessages(backend, self._vectors, self._rules)

    @property
    def model_change(self) -> str | None:
        """Why vector search is off because the database holds another embedding
        model's vectors (what is stored, what is asked, the command that moves them),
        or ``None``."""
        return self._vectors.model_warning

    @property
    def consent(self) -> ConsentHandler | None:
        """Asked when a write needs consent; ``None`` makes such writes raise
        :class:`~satchel.ConsentRequiredError`."""
        return self._rules.consent

    @consent.setter
    def consent(self, handler: ConsentHandler | None) -> None:
        self._rules.consent = handler

    @property
    def hard_limit(self) -> bool:
        """Whether a write past a block's ``char_limit`` is refused (else accepted and
        logged)."""
        return self._rules.hard_limit

    @hard_limit.setter
    def hard_limit(self, hard: bool) -> None:
        self._rules.hard_limit = hard

    # --- GatedWrites ---

    async def update_block_text(
        self,
        agent: str,
        label: str,
        value: str,
        *,
        expected_version: int | None = None,
        description: str | None = None,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.update_block_text`."""
        return await self._writes.update_block_text(
            agent,
            label,
            value,
            expected_version=expected_version,
            description=description,
            origin=origin,
        )

    async def append_to_block(
        self,
        agent: str,
        label: str,
        text: str,
        *,
        separator: str = "\n",
        origin: RequestOrigin | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.append_to_block`."""
        return await self._writes.append_to_block(
            agent, label, text, separator=separator, origin=origin
        )

    async def replace_in_block(
        self,
        agent: str,
        label: str,
        old: str,
        new: str,
        *,
        expected_version: int | None = None,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.replace_in_block`."""
        return await self._writes.replace_in_block(
            agent, label, old, new, expected_version=expected_version, origin=origin
        )

    async def delete_block(
        self,
        agent: str,
        label: str,
        *,
        expected_version: int | None = None,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.delete_block`."""
        return await self._writes.delete_block(
            agent, label, expected_version=expected_version, origin=origin
        )

    async def set_kind(
        self,
        agent: str,
        label: str,
        kind: BlockKind,
        *,
        expected_version: int | None = None,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.set_kind`."""
        return await self._writes.set_kind(
            agent, label, kind, expected_version=expected_version, origin=origin
        )

    async def swap_blocks(
        self,
        agent: str,
        archive_label: str,
        load_label: str,
        *,
        origin: RequestOrigin | None = None,
    ) -> tuple[Block, Block]:
        """See :meth:`MemoryStore.swap_blocks`."""
        return await self._writes.swap_blocks(agent, archive_label, load_label, origin=origin)

    async def share_block(
        self,
        agent: str,
        label: str,
        recipient: str,
        permission: Permission,
        *,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.share_block`."""
        return await self._writes.share_block(agent, label, recipient, permission, origin=origin)

    async def unshare_block(
        self, agent: str, label: str, recipient: str, *, origin: RequestOrigin | None = None
    ) -> Block:
        """See :meth:`MemoryStore.unshare_block`."""
        return await self._writes.unshare_block(agent, label, recipient, origin=origin)

    # --- OperatorWrites ---

    async def operator_edit(
        self,
        agent: str,
        label: str,
        *,
        expected_version: int,
        value: str | None = None,
        description: str | None = None,
        permission: Permission | None = None,
        char_limit: int | Unset | None = UNSET,
        kind: BlockKind | None = None,
    ) -> Block:
        """Change a block as its human operator: text, description, permission, limit
        and kind together, in one write at ``expected_version``.

        This is the person's edit, not a model's: it does **not** pass the permission
        gate or ask for consent (it can set the text of a ``read_only`` block and keep
        it read-only), and no built-in tool reaches it. It is still one version step:
        every given setting changes in one transaction, or nothing does, and the block
        history keeps the version it replaced. Shares above a new permission are
        lowered to it. The text and limit that result are checked together, always as
        a hard limit. An edit that changes nothing keeps the version. Only the owner's
        blocks can be edited.

        Args:
            agent: The owner.
            label: The block (the owner's bare label).
            expected_version: The version the operator saw; the edit happens only while
                the block is still at it.
            value: The new text, or ``None`` to keep it.
            description: The new description, or ``None`` to keep it.
            permission: The new permission, or ``None`` to keep it.
            char_limit: The new limit (``>= 0``), ``None`` for no limit, or
                :attr:`Unset.UNSET <satchel.memory.Unset.UNSET>` (the default) to keep it.
            kind: Move the block to this kind, or ``None`` to keep it.

        Returns:
            The block as the edit left it.

        Raises:
            VersionConflictError: The block is no longer at ``expected_version``
                (nothing changes).
            CharLimitError: The text would be longer than the limit (nothing changes).
            NotFoundError: No such block.
            PermissionDeniedError: ``agent`` is a recipient of the block, not its owner.
            InvalidInputError: An argument is invalid (the message says which).

        Example:
            >>> block = await store.get_block("ada", "rules")  # doctest: +SKIP
            >>> await store.operator_edit(  # doctest: +SKIP
            ...     "ada", "rules", expected_version=block.version,
            ...     value="Share nothing.", permission=Permission.READ_ONLY,
            ... )
        """
        return await self._operator.operator_edit(
            agent,
            label,
            expected_version=expected_version,
            value=value,
            description=description,
            permission=permission,
            char_limit=char_limit,
            kind=kind,
        )

    async def operator_delete(self, agent: str, label: str, *, expected_version: int) -> Block:
        """Delete a block as its human operator, at ``expected_version``, whatever its
        permission (no gate, no consent; no built-in tool reaches it). Its history goes
        with it. Only the owner's blocks can be deleted this way.

        Returns:
            The block as it was.

        Raises:
            VersionConflictError: The block is no longer at ``expected_version``
                (nothing is deleted).
            NotFoundError: No such block.
            PermissionDeniedError: ``agent`` is a recipient of the block, not its owner.
            InvalidInputError: ``expected_version`` or ``agent`` is invalid.
        """
        return await self._operator.operator_delete(agent, label, expected_version=expected_version)

    async def merge_agents(self, source: str, target: str, *, dry_run: bool = False) -> MergeReport:
        """Bring ``source``'s memory into ``target``'s, losing nothing, in one
        transaction (see :mod:`satchel.memory._merge` for the rules): blocks whose
        label ``target`` lacks move as they are, same-label blocks are joined line by
        line into ``target``'s, conversations move, and blocks other agents shared
        with ``source`` are shared with ``target``. An operator's write: no gate, no
        consent; a joined block may end over its limit (kept whole, and reported).

        Args:
            source: The agent merged from; it is left with no blocks or messages.
            target: The agent merged into (set up if new).
            dry_run: Only report what would be done.

        Returns:
            What was (or would be) done.

        Raises:
            VersionConflictError: ``source``'s memory changed while the merge was being
                planned (nothing written; run it again).
            InvalidInputError: ``source`` is ``target``, or a name is invalid.
            NotFoundError: ``source`` owns nothing and nothing is shared with it.

        Example:
            >>> report = await store.merge_agents("default", "me")  # doctest: +SKIP
            >>> [j.label for j in report.joined]  # doctest: +SKIP
            ['human', 'persona']
        """
        return await self._operator.merge_agents(source, target, dry_run=dry_run)

    # --- AgentsAndMessages ---

    async def ensure_agent(self, agent: str, template: AgentTemplate | None = None) -> list[Block]:
        """See :meth:`MemoryStore.ensure_agent`."""
        return await self._agents.ensure_agent(agent, template)

    async def describe_agents(self, agent: str | None = None) -> list[AgentSummary]:
        """See :meth:`MemoryStore.describe_agents`."""
        return await self._agents.describe_agents(agent)

    async def add_message(
        self,
        agent: str,
        role: Role,
        content: str,
        *,
        conversation_id: str = "default",
        created_at: datetime | None = None,
        tags: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> Message:
        """See :meth:`MemoryStore.add_message`."""
        return await self._agents.add_message(
            agent,
            role,
            content,
            conversation_id=conversation_id,
            created_at=created_at,
            tags=tags,
            metadata=metadata,
        )

    async def list_messages(
        self,
        agent: str,
        *,
        conversation_id: str | None = None,
        limit: int = 50,
        before: datetime | None = None,
    ) -> list[Message]:
        """See :meth:`MemoryStore.list_messages`."""
        return await self._agents.list_messages(
            agent, conversation_id=conversation_id, limit=limit, before=before
        )

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
    ) -> SearchResults:
        """See :meth:`MemoryStore.search`. A list of hits with ``warnings``: when the
        embedder fails, the search goes on by keywords only and says so there."""
        validate_agent(agent)
        if not 1 <= limit <= 1000:
            raise InvalidInputError("limit must be between 1 and 1000")
        filters = filters or SearchFilters()
        plan = plan_search(Domain(domains), filters)
        warnings: list[str] = []
        vector: F32 | None = None
        if mode != "bm25":
            if (mismatch := self._vectors.model_warning) is not None:
                warnings.append(mismatch)
            vector, failed = await self._vectors.query_vector(query.strip())
            warnings.extend([failed] if failed is not None else [])
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
        matched = self.backend.vectors_ok
        hits = await self.backend.search(request) if plan.blocks or plan.messages else []
        if matched and vector is not None and (mismatch := self._vectors.model_warning):
            warnings.append(mismatch)  # another process moved the database meanwhile
            vector = None
        if not plan.context:
            return SearchResults(hits, warnings=warnings)
        lines = await self._context_lines(agent, query, vector, filters, mode, warnings)
        if mode == "bm25" and hits:  # coverage in [0, 1] beside raw BM25 scores
            top = max(1.0, hits[0].score)
            lines = [h.model_copy(update={"score": h.score * top}) for h in lines]
        ranked = sorted([*hits, *lines], key=lambda h: -h.score)[:limit]
        return SearchResults(ranked, warnings=warnings)

    async def _context_lines(
        self,
        agent: str,
        query: str,
        vector: F32 | None,
        filters: SearchFilters,
        mode: SearchMode,
        warnings: list[str],
    ) -> list[SearchHit]:
        """The matching lines of ``agent``'s core and working blocks; by keywords only
        (noted in ``warnings``) if embedding the lines fails."""
        blocks = await self.backend.list_visible(agent, (BlockKind.CORE, BlockKind.WORKING))
        search = partial(
            self._lines.search,
            agent,
            blocks,
            query,
            filters=filters,
            mode=mode,
            vector_weight=self.fusion.vector_weight,
        )
        if vector is None:
            return await search(None, None)
        try:
            return await search(vector, self._vectors.active)
        except Exception as exc:  # the boundary: the search goes on, with a warning
            logger.warning("searching memory lines by keywords only: %s", exc)
            warnings.append(
                f"searched core memory lines by keywords only: the embedder failed ({exc})"
            )
            return await search(None, None)

    # --- maintenance, export and import -------------------------------------------

    async def reembed(
        self,
        *,
        progress: ProgressCallback | None = None,
        batch_size: int = 64,
        missing_only: bool = False,
    ) -> int:
        """See :meth:`MemoryStore.reembed`. Re-embeds everything (``missing_only``: only
        the texts without a vector), and moves a database that held another model's
        vectors to the current embedder; such a move resumes where an interrupted one
        stopped (:mod:`satchel.memory._vector_upkeep`)."""
        return await self._vectors.reembed(progress, batch_size, missing_only=missing_only)

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
