"""Everything a memory store does that is not a database step, written once.

:class:`StoreBase` implements the public methods of :class:`~satchel.memory.MemoryStore`
for every backend: argument checks, the permission gate
(:func:`~satchel.memory._permissions.authorize`) with its retry loop, the reasons a
consent handler is shown, embedding (and the coalesced re-embedding of a block after an
append or a replace), preparing a search, and re-embedding page by page. A backend
subclasses it and supplies only the database steps declared by
:class:`~satchel.memory._store_steps.StoreSteps` (export and import's among them, from
:class:`~satchel.memory._transfer.RecordTransfer`), each one read, one write
transaction or one statement. This is httpx's split between its sync and async
clients: one base for everything but I/O.

What stays with each backend is what really differs: connecting and closing,
migrations, the SQL, and how a write re-checks the level the gate allowed. SQLite
re-reads the level inside the write transaction; PostgreSQL makes it part of the
writing statement. Either way a write step raises
:class:`~satchel.memory._block_rules.LevelChanged` when the level moved, and the gate
runs again (at most five times).
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from datetime import datetime
from types import TracebackType
from typing import Any, Literal, Self, TypeVar

import numpy as np
import numpy.typing as npt

from satchel._errors import (
    AlreadyExistsError,
    InvalidInputError,
    PermissionDeniedError,
    VersionConflictError,
)
from satchel.embed import Embedder, default_embedder
from satchel.memory._block_rules import LevelChanged
from satchel.memory._embedding import EmbedBatcher
from satchel.memory._fts import query_terms
from satchel.memory._fusion import Fusion
from satchel.memory._models import (
    UNSET,
    AgentSummary,
    Block,
    BlockKind,
    Domain,
    Message,
    Permission,
    Role,
    SearchFilters,
    SearchHit,
    SearchMode,
    Unset,
    normalise_tags,
    utc_now,
    validate_agent,
    validate_label,
)
from satchel.memory._permissions import ConsentHandler, Operation, RequestOrigin, authorize
from satchel.memory._protocol import ProgressCallback
from satchel.memory._search import SearchRequest, plan_search
from satchel.memory._store_steps import NewBlock, NewMessage, StoreSteps, TextDomain
from satchel.memory._template import AgentTemplate, default_template
from satchel.memory._transfer import MAX_EMBED_CHARS

__all__ = ["StoreBase"]

logger = logging.getLogger("satchel.memory")

_T = TypeVar("_T")
F32 = npt.NDArray[np.float32]
_ROLES = ("user", "assistant", "system", "tool")
_RETRIES = 5


class StoreBase(StoreSteps):
    """The backend-neutral half of a memory store; see the module docstring.

    Args:
        embedder: The embedding model: ``"default"`` for satchel's local model, any
            :class:`~satchel.embed.Embedder`, or ``None`` for BM25-only search.
        consent: Asked when a write needs consent.
        char_limit_mode: ``hard`` refuses a write past a block's ``char_limit``;
            ``soft`` accepts it and logs a warning.
        fusion: How hybrid search combines full-text and vector scores.
    """

    def __init__(
        self,
        *,
        embedder: Embedder | Literal["default"] | None,
        consent: ConsentHandler | None,
        char_limit_mode: Literal["hard", "soft"],
        fusion: Fusion,
    ) -> None:
        if embedder == "default":
            embedder = default_embedder()
        self.embedder: Embedder | None = embedder
        self.consent = consent
        self.hard_limit = char_limit_mode == "hard"
        self.fusion = fusion
        self._batcher = EmbedBatcher(embedder) if embedder is not None else None
        self._vectors_ok = False
        self._dirty: set[int] = set()
        self._refreshing: set[int] = set()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @abstractmethod
    async def close(self) -> None:
        """Close every connection. Idempotent."""

    # --- plumbing ------------------------------------------------------------------

    @property
    def _model_id(self) -> str:
        assert self.embedder is not None
        return f"{self.embedder.name}:{self.embedder.dim}"

    async def _embed_one(self, text: str) -> F32 | None:
        if self._batcher is None or not self._vectors_ok or not text:
            return None
        return (await self._batcher.embed([text[:MAX_EMBED_CHARS]]))[0]

    async def _refresh_block_vector(self, pk: int, text: str) -> None:
        """Embed a block's text after a write that changed it (``text`` is the value
        the write left).

        Coalesced per block: while one call is embedding, later calls only mark the
        block dirty and return, and the running call embeds the newest text once more.
        So a burst of appends costs a few embeddings, not one per append, and the
        vector catches up with the last write.
        """
        if self._batcher is None or not self._vectors_ok:
            return
        self._dirty.add(pk)
        if pk in self._refreshing:
            return
        self._refreshing.add(pk)
        try:
            latest: str | None = text
            while pk in self._dirty:
                self._dirty.discard(pk)
                await self._embed_block_now(self._batcher, pk, latest)
                latest = None  # a later write changed it: read the newest text
        finally:
            self._refreshing.discard(pk)

    async def _embed_block_now(self, batcher: EmbedBatcher, pk: int, text: str | None) -> None:
        if text is None:
            text = await self._block_text(pk)
        if not text:
            return
        try:
            vectors = await batcher.embed([text[:MAX_EMBED_CHARS]])
        except Exception:  # the write is committed; a missing vector is healed by reembed()
            logger.exception("embedding block %d failed; its vector is missing", pk)
            return
        await self._store_vectors("blocks", [(pk, text)], vectors)

    async def _gated(
        self,
        agent: str,
        label: str,
        operation: Operation,
        reason: Callable[[Block], str],
        write: Callable[[int, Permission], Awaitable[_T]],
        *,
        share_level: Permission | None = None,
        content: Any = None,
        origin: RequestOrigin | None = None,
    ) -> tuple[int, _T]:
        """Resolve ``label`` for ``agent``, pass the permission gate (nothing is held
        open while a consent handler decides), then run ``write(pk, level)``, a
        database step that re-checks the level the gate allowed."""
        validate_agent(agent)
        for _ in range(_RETRIES):
            [(pk, block)] = await self._resolve(agent, [label])
            level = await authorize(
                operation,
                block=block,
                agent=agent,
                consent=self.consent,
                reason=reason(block),
                share_level=share_level,
                content=content,
                origin=origin,
            )
            try:
                return pk, await write(pk, level)
            except LevelChanged:
                continue
        raise VersionConflictError(
            f"the permissions of block {label!r} kept changing; try again",
            details={"label": label},
        )

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
        return await self._insert_block(new, await self._embed_one(value))

    async def get_block(self, agent: str, label: str) -> Block:
        """See :meth:`MemoryStore.get_block`."""
        validate_agent(agent)
        [(_, block)] = await self._resolve(agent, [label])
        return block

    async def list_blocks(
        self, agent: str, kinds: Collection[BlockKind] | None = None
    ) -> list[Block]:
        """See :meth:`MemoryStore.list_blocks`."""
        validate_agent(agent)
        return await self._list_visible(agent, kinds)

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
        vector = await self._embed_one(value)
        _, block = await self._gated(
            agent,
            label,
            Operation.OVERWRITE,
            lambda b: (
                f"overwrite block {b.label!r} ({b.chars} characters) with {len(value)} characters"
            ),
            lambda pk, level: self._set_text(
                agent,
                pk,
                level,
                value,
                expected_version=expected_version,
                description=description,
                vector=vector,
            ),
            content={"value": value, "description": description},
            origin=origin,
        )
        return block

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
        pk, block = await self._gated(
            agent,
            label,
            Operation.APPEND,
            lambda b: f"append {len(text)} characters to block {b.label!r}",
            lambda pk, level: self._append(agent, pk, level, text, separator),
            content={"text": text, "separator": separator},
            origin=origin,
        )
        await self._refresh_block_vector(pk, block.value)
        return block

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
        pk, block = await self._gated(
            agent,
            label,
            Operation.OVERWRITE,
            lambda b: (
                f"replace {len(old)} characters of block {b.label!r} with {len(new)} characters"
            ),
            lambda pk, level: self._replace(
                agent, pk, level, old, new, expected_version=expected_version
            ),
            content={"old": old, "new": new},
            origin=origin,
        )
        await self._refresh_block_vector(pk, block.value)
        return block

    async def delete_block(
        self,
        agent: str,
        label: str,
        *,
        expected_version: int | None = None,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """See :meth:`MemoryStore.delete_block`."""
        _, block = await self._gated(
            agent,
            label,
            Operation.DELETE,
            lambda b: f"delete block {b.label!r} ({b.chars} characters)",
            lambda pk, level: self._delete(agent, pk, level, expected_version=expected_version),
            origin=origin,
        )
        return block

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
        kind = BlockKind(kind)
        _, block = await self._gated(
            agent,
            label,
            Operation.KIND_CHANGE,
            lambda b: f"move block {b.label!r} from {b.kind.value} to {kind.value} memory",
            lambda pk, level: self._set_kind(
                agent, pk, level, kind, expected_version=expected_version
            ),
            content={"kind": kind.value},
            origin=origin,
        )
        return block

    async def swap_blocks(
        self,
        agent: str,
        archive_label: str,
        load_label: str,
        *,
        origin: RequestOrigin | None = None,
    ) -> tuple[Block, Block]:
        """See :meth:`MemoryStore.swap_blocks`."""
        validate_agent(agent)
        for _ in range(_RETRIES):
            (pk_a, block_a), (pk_l, block_l) = await self._resolve(
                agent, [archive_label, load_label]
            )
            if pk_a == pk_l:
                raise InvalidInputError("swap needs two different blocks")
            levels = [
                await authorize(
                    Operation.KIND_CHANGE,
                    block=block,
                    agent=agent,
                    consent=self.consent,
                    reason=f"swap: move block {block.label!r} to {target.value} memory",
                    content={"kind": target.value},
                    origin=origin,
                )
                for block, target in ((block_a, BlockKind.ARCHIVAL), (block_l, BlockKind.WORKING))
            ]
            try:
                return await self._swap(agent, (pk_a, levels[0]), (pk_l, levels[1]))
            except LevelChanged:
                continue
        raise VersionConflictError("the permissions of the blocks kept changing; try again")

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
        [(pk, block)] = await self._resolve(agent, [label])
        if block.agent != agent:
            raise PermissionDeniedError(
                f"only the owner {block.agent!r} may configure block {block.label!r}",
                details={"label": block.label, "owner": block.agent, "operation": "configure"},
            )
        if permission is None and isinstance(char_limit, Unset) and description is None:
            return block
        return await self._configure(
            agent, pk, permission=permission, char_limit=char_limit, description=description
        )

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
        validate_agent(recipient)
        return await self._share(agent, label, recipient, Permission(permission), origin)

    async def unshare_block(
        self, agent: str, label: str, recipient: str, *, origin: RequestOrigin | None = None
    ) -> Block:
        """See :meth:`MemoryStore.unshare_block`."""
        validate_agent(recipient)
        return await self._share(agent, label, recipient, None, origin)

    async def _share(
        self,
        agent: str,
        label: str,
        recipient: str,
        permission: Permission | None,
        origin: RequestOrigin | None,
    ) -> Block:
        def reason(block: Block) -> str:
            if permission is None:
                return f"stop sharing block {block.label!r} with {recipient!r}"
            return f"share block {block.label!r} with {recipient!r} at {permission.value}"

        _, block = await self._gated(
            agent,
            label,
            Operation.SHARE,
            reason,
            lambda pk, level: self._set_share(agent, pk, level, recipient, permission),
            share_level=permission,
            content={"recipient": recipient, "permission": permission and permission.value},
            origin=origin,
        )
        return block

    # --- agents --------------------------------------------------------------------

    async def ensure_agent(self, agent: str, template: AgentTemplate | None = None) -> list[Block]:
        """See :meth:`MemoryStore.ensure_agent`."""
        validate_agent(agent)
        if await self._is_set_up(agent):
            return []
        chosen = default_template() if template is None else template
        blocks: list[tuple[NewBlock, F32 | None]] = []
        for spec in chosen.blocks:
            new = NewBlock(
                agent=agent,
                label=spec.label,
                value=spec.value,
                description=spec.description,
                kind=spec.kind,
                permission=spec.permission,
                char_limit=spec.char_limit,
                pinned=spec.pinned,
                tags=(),
                metadata=None,
                hard_limit=self.hard_limit,
            )
            blocks.append((new, await self._embed_one(spec.value)))
        for _ in range(_RETRIES):
            try:
                made = await self._initialise_agent(agent, chosen.name, blocks)
            except AlreadyExistsError:  # a block of that label appeared meanwhile
                continue
            if made:
                logger.info(
                    "agent %r set up from template %r: %s",
                    agent,
                    chosen.name,
                    ", ".join(b.label for b in made),
                )
            return made or []
        raise VersionConflictError(f"setting up agent {agent!r} kept conflicting; try again")

    async def describe_agents(self, agent: str | None = None) -> list[AgentSummary]:
        """See :meth:`MemoryStore.describe_agents`."""
        if agent is not None:
            validate_agent(agent)
        return await self._agent_summaries(agent)

    # --- messages ------------------------------------------------------------------

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
        validate_agent(agent)
        if role not in _ROLES:
            raise InvalidInputError(f"role must be one of {_ROLES}, got {role!r}")
        if created_at is not None and created_at.tzinfo is None:
            raise InvalidInputError("datetimes given to the memory store must be timezone-aware")
        new = NewMessage(
            agent=agent,
            role=role,
            content=content,
            conversation_id=conversation_id,
            created_at=created_at or utc_now(),
            tags=normalise_tags(tags),
            metadata=metadata,
        )
        return await self._insert_message(new, await self._embed_one(content))

    async def list_messages(
        self,
        agent: str,
        *,
        conversation_id: str | None = None,
        limit: int = 50,
        before: datetime | None = None,
    ) -> list[Message]:
        """See :meth:`MemoryStore.list_messages`."""
        validate_agent(agent)
        if limit < 1:
            raise InvalidInputError("limit must be at least 1")
        return await self._list_messages(
            agent, conversation_id=conversation_id, limit=limit, before=before
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
        request = SearchRequest(
            agent=agent,
            terms=query_terms(query),
            query_vector=await self._embed_one(query.strip()) if mode != "bm25" else None,
            plan=plan_search(Domain(domains), filters),
            filters=filters,
            limit=limit,
            mode=mode,
            fusion=self.fusion,
        )
        return await self._search(request)

    # --- maintenance ---------------------------------------------------------------

    async def reembed(
        self, *, progress: ProgressCallback | None = None, batch_size: int = 64
    ) -> int:
        """See :meth:`MemoryStore.reembed`. Re-embeds everything, and adopts the current
        embedder for a database that held another model's vectors."""
        if self._batcher is None:
            return 0
        batcher = self._batcher
        total = await self._count_texts()
        if not self._vectors_ok:
            await self._adopt_model()
            self._vectors_ok = True
        done = 0
        if progress is not None:
            progress(0, total)
        domains: tuple[TextDomain, ...] = ("blocks", "messages")
        for domain in domains:
            after = 0
            while items := await self._texts_to_embed(domain, after, batch_size):
                vectors = await batcher.embed([text[:MAX_EMBED_CHARS] for _, text in items])
                await self._store_vectors(domain, items, vectors)
                after = items[-1][0]
                done += len(items)
                if progress is not None:
                    progress(min(done, total), max(total, done))
        return done
