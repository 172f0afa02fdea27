"""The :class:`MemoryStore` protocol every memory backend implements.

It is backend-neutral on purpose: SQLite (:class:`~satchel.memory.SQLiteStore`) and
PostgreSQL implement it and run the same contract test suite (``tests/memory``).

Conventions shared by every method:

* The first argument, ``agent``, names the agent acting. Agents are created implicitly
  by their first write; an agent only ever sees its own memory plus the blocks shared
  with it. :meth:`MemoryStore.ensure_agent` gives a new agent its starting blocks
  (``persona`` and ``human`` by default), once; front ends call it when they start
  acting as an agent.
* A block is addressed by ``label``. The owner uses the bare label. A recipient of a
  shared block uses the bare label too, unless it owns a block with the same label
  (its own wins) or two owners shared that label with it; then it writes
  ``owner/label``. ``owner/label`` always works for a shared block.
* Every write to a block passes the permission gate
  (:func:`satchel.memory._permissions.authorize`), which may ask the store's consent
  handler.
* :meth:`MemoryStore.configure_block` is an operator's tool too: it changes a block's
  settings for its owner and does not pass the permission gate.
* :meth:`MemoryStore.list_agents`, :meth:`MemoryStore.export_records` and
  :meth:`MemoryStore.import_records` are an operator's tools (backup, restore, moving
  memory between backends): they act on the whole store, not as an agent, and
  ``import_records`` does not pass the permission gate.
* Failures raise the memory errors of :mod:`satchel._errors`: :class:`NotFoundError`,
  :class:`AlreadyExistsError`, :class:`VersionConflictError`, :class:`CharLimitError`,
  :class:`PermissionDeniedError`, :class:`ConsentRequiredError`, and
  :class:`StorageError` when the database underneath fails.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

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
)
from satchel.memory._paging import BlockPage
from satchel.memory._permissions import RequestOrigin
from satchel.memory._template import AgentTemplate

__all__ = ["MemoryStore", "ProgressCallback"]

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` during long work such as re-embedding."""


@runtime_checkable
class MemoryStore(Protocol):
    """Async storage and search for blocks (core, working, archival) and messages."""

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
        """Create a block owned by ``agent``.

        Raises:
            AlreadyExistsError: ``agent`` already owns a block with that label.
            CharLimitError: ``value`` is longer than ``char_limit`` (hard limits).
            ValueError: The label or agent name is invalid.
        """
        ...

    async def get_block(self, agent: str, label: str) -> Block:
        """Read one block ``agent`` owns or that is shared with it.

        Raises:
            NotFoundError: No such block visible to ``agent``.
        """
        ...

    async def get_block_by_id(self, agent: str, block_id: str) -> Block:
        """Read the block whose ``id`` is ``block_id``, if ``agent`` owns it or it is
        shared with it: exactly the blocks :meth:`get_block` reads by label.

        Raises:
            NotFoundError: No block with that id is visible to ``agent``.
            InvalidInputError: ``block_id`` is not 1-256 characters free of control characters.
        """
        ...

    async def list_blocks(
        self, agent: str, kinds: Collection[BlockKind] | None = None
    ) -> list[Block]:
        """Every block ``agent`` owns or that is shared with it, optionally of some kinds
        only, ordered by kind (core, working, archival), then owner, then label."""
        ...

    async def list_blocks_page(
        self,
        agent: str,
        *,
        kinds: Collection[BlockKind] | None = None,
        offset: int = 0,
        limit: int = 100,
    ) -> BlockPage:
        """One page of :meth:`list_blocks`: the blocks at ``offset`` to ``offset +
        limit`` of that listing, in its order, and how many the listing holds. Only the
        page's blocks are read.

        Args:
            agent: The agent whose view is listed.
            kinds: Only blocks of these kinds (``None``: every kind).
            offset: How many blocks of the listing to skip (``>= 0``; past the end
                gives an empty page that still says the total).
            limit: At most this many blocks (1 to
                :data:`~satchel.memory.MAX_PAGE_LIMIT`).

        Raises:
            InvalidInputError: ``offset`` or ``limit`` is out of range, or not a whole
                number.

        Example:
            >>> page = await store.list_blocks_page("ada", kinds=[BlockKind.CORE])  # doctest: +SKIP
            >>> page.total, [b.label for b in page.blocks]  # doctest: +SKIP
            (2, ['human', 'persona'])
        """
        ...

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
        """Overwrite a block's value (and optionally its description).

        Args:
            agent: The agent acting.
            label: The block.
            value: The new text.
            expected_version: If given, the write only happens while the block is still
                at this version.
            description: A new description, or ``None`` to keep it.
            origin: Where the write came from, for a consent prompt (every write
                below takes it too).

        Raises:
            VersionConflictError: The block moved past ``expected_version``.
            CharLimitError: ``value`` is longer than the block's limit.
        """
        ...

    async def append_to_block(
        self,
        agent: str,
        label: str,
        text: str,
        *,
        separator: str = "\n",
        origin: RequestOrigin | None = None,
    ) -> Block:
        """Append ``text`` atomically; ``separator`` goes in between unless the block is
        empty. Concurrent appends all land, in some order.

        Raises:
            CharLimitError: The block would grow past its limit.
        """
        ...

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
        """Replace the one occurrence of ``old`` with ``new``.

        Raises:
            NotFoundError: ``old`` does not occur (the details say ``matches: 0``).
            MemoryStoreError: ``old`` occurs more than once (``details["matches"]``
                says how many times).
        """
        ...

    async def delete_block(
        self,
        agent: str,
        label: str,
        *,
        expected_version: int | None = None,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """Delete a block and return it as it was."""
        ...

    async def set_kind(
        self,
        agent: str,
        label: str,
        kind: BlockKind,
        *,
        expected_version: int | None = None,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """Move a block to ``kind``: archive is ``ARCHIVAL``, load is ``WORKING``."""
        ...

    async def swap_blocks(
        self,
        agent: str,
        archive_label: str,
        load_label: str,
        *,
        origin: RequestOrigin | None = None,
    ) -> tuple[Block, Block]:
        """Archive one block and load another into working memory, atomically: both
        happen or neither. Returns ``(archived, loaded)``."""
        ...

    async def configure_block(
        self,
        agent: str,
        label: str,
        *,
        permission: Permission | None = None,
        char_limit: int | Unset | None = UNSET,
        description: str | None = None,
    ) -> Block:
        """Change the settings of a block ``agent`` owns: its permission, character
        limit and description. The text, kind, tags, shares and vector stay.

        This is a human operator's call (the CLI's ``satchel memory configure``), not an
        agent's: it is no built-in tool and does **not** pass the permission gate, so it
        can make a read-only block writable again. Only the owner may call it.
        Shares above a new permission are lowered to it (a share is never above the
        block's own permission). A call that changes nothing (nothing given, or every
        given setting already holds) returns the block without a new version; otherwise
        the version goes up by one, as for any write.

        Args:
            agent: The owner.
            label: The block (the owner's bare label, or ``owner/label``).
            permission: The new permission, or ``None`` to keep it.
            char_limit: The new limit (``>= 0``), ``None`` to remove the limit, or
                :attr:`Unset.UNSET <satchel.memory.Unset.UNSET>` (the default) to keep
                it.
            description: The new description, or ``None`` to keep it.

        Raises:
            NotFoundError: No such block visible to ``agent``.
            PermissionDeniedError: ``agent`` is a recipient of the block, not its owner.
            CharLimitError: The block holds more characters than the new limit (nothing
                changes).
            ValueError: ``char_limit`` is negative.

        Example:
            >>> await store.configure_block(  # doctest: +SKIP
            ...     "ada", "persona", permission=Permission.READ_ONLY, char_limit=None
            ... )
        """
        ...

    async def share_block(
        self,
        agent: str,
        label: str,
        recipient: str,
        permission: Permission,
        *,
        origin: RequestOrigin | None = None,
    ) -> Block:
        """Share the owner's block with ``recipient`` at ``permission`` (replacing any
        previous share with that agent). Only the owner may share, and never above the
        block's own permission."""
        ...

    async def unshare_block(
        self, agent: str, label: str, recipient: str, *, origin: RequestOrigin | None = None
    ) -> Block:
        """Stop sharing the block with ``recipient``.

        Raises:
            NotFoundError: The block is not shared with ``recipient``.
        """
        ...

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
        """Record a conversation message in ``agent``'s memory (``created_at``
        defaults to now; give it when importing history)."""
        ...

    async def list_messages(
        self,
        agent: str,
        *,
        conversation_id: str | None = None,
        limit: int = 50,
        before: datetime | None = None,
    ) -> list[Message]:
        """The latest ``limit`` messages (optionally of one conversation, optionally
        strictly before a time), oldest first."""
        ...

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
        """Search what ``agent`` may read. Any text is a valid query.

        Args:
            agent: The searching agent; the scope is its own memory plus blocks shared
                with it.
            query: Free text. Search syntax in it is treated as plain words.
            domains: Archival blocks, conversation messages, or ``all``: both, and
                the lines of the agent's core and working blocks (each block's best
                line a ``core_memory`` hit).
            filters: Narrow by role, time, tags, labels or conversation; tool traffic
                is left out unless ``tool_traffic``; ``exclude_turn`` leaves out an
                agent's turn in progress.
            limit: At most this many hits (1 to 1000).
            mode: ``hybrid`` (the default), ``bm25`` or ``vector``.

        Returns:
            Hits, best first, each with its full text (a core or working block's hit:
            the matching line). :func:`~satchel.memory.is_relevant` tells a hit that
            is evidence from the least unrelated entry. satchel's stores return a
            :class:`~satchel.memory.SearchResults`, whose ``warnings`` say when the
            search ran by keywords only (the embedder failed, or the database holds
            another model's vectors): a failing embedder never fails a search.
        """
        ...

    async def reembed(
        self, *, progress: ProgressCallback | None = None, batch_size: int = 64
    ) -> int:
        """Embed every block and message again with the store's embedder (after a model
        change, or to fill in vectors a crash left missing). Returns how many texts were
        embedded. satchel's stores also take ``missing_only=True`` (embed only the texts
        without a vector), and resume an interrupted move to another model."""
        ...

    async def ensure_agent(self, agent: str, template: AgentTemplate | None = None) -> list[Block]:
        """Set ``agent`` up with its starting blocks, the first time only.

        The first call for an agent records it as set up and creates the template's
        blocks (skipping a label the agent owns already); every later call does
        nothing, so a starting block the user deleted or archived is not created
        again. Safe when several processes set up the same agent at once: the blocks
        are created exactly once. Bypasses the permission gate (an operator's set-up,
        like :meth:`configure_block`).

        Args:
            agent: The agent.
            template: The blocks to start with; ``None`` for
                :func:`~satchel.memory.default_template` (Letta's ``persona`` and
                ``human``), :func:`~satchel.memory.empty_template` for none.

        Returns:
            The blocks created now; empty when the agent was set up before.

        Example:
            >>> await store.ensure_agent("ada")  # doctest: +SKIP
            [Block(label='persona', ...), Block(label='human', ...)]
        """
        ...

    async def describe_agents(self, agent: str | None = None) -> list[AgentSummary]:
        """Every agent that was set up or owns a block or a message, sorted by name,
        with how many blocks, archival entries and messages it owns, when it was
        created and last active, and the template it started from.

        Args:
            agent: Only this agent (an empty list when the store has never seen it).
        """
        ...

    async def list_agents(self) -> list[str]:
        """Every agent that owns a block or a message, sorted by name (agents that only
        receive shares are not listed)."""
        ...

    def export_records(self, agent: str | None = None) -> AsyncIterator[Block | Message]:
        """Every record of the store, or of one owner, streamed in a fixed order.

        First the blocks, ordered by owner then label, each exactly as stored (every
        share included); then the messages, ordered by owner, time, then the order
        they were written. Feeding the records to :meth:`import_records` of an empty
        store and exporting again gives equal records.

        Args:
            agent: Only the blocks and messages this agent owns; ``None`` for all.

        Example:
            >>> records = [r async for r in source.export_records()]  # doctest: +SKIP
            >>> await target.import_records(records)  # doctest: +SKIP
        """
        ...

    async def import_records(
        self,
        records: Iterable[Block | Message],
        *,
        on_conflict: OnConflict = "error",
        batch_size: int = 500,
    ) -> ImportReport:
        """Restore exported records exactly: ids, versions, timestamps, shares, tags,
        metadata, kinds, permissions, ``char_limit`` and ``pinned`` are kept as given.

        This is an operator's restore, not an agent's write: it does **not** pass the
        permission gate or ask for consent. It does hold the records to the gate's
        rule about shares: a block is never shared above its own permission (a file
        that would give another agent more than the owner has is refused); and to the
        store's ``char_limit_mode``: a block whose value is longer than its
        ``char_limit`` is refused by a ``hard`` store (the default), and kept with a
        logged warning by a ``soft`` one, the only kind that can hold such a block.
        The records' text is embedded with the store's embedder (in batches, off the
        event loop) and stored with them, so search finds it at once.

        Records are streamed ``batch_size`` at a time (checked, embedded, written), so
        memory stays flat however many there are, and every batch is written in one
        transaction: a bad record or a conflict anywhere leaves nothing of the import
        behind. On SQLite the import holds the write lock until it ends.

        Args:
            records: Blocks and messages, e.g. from :meth:`export_records`.
            on_conflict: When the store holds a record with the same id, or a block
                with the same owner and label: ``"error"`` raises, ``"skip"`` keeps the
                stored one, ``"replace"`` deletes the stored one(s) and writes the new.
            batch_size: Records checked and embedded at a time.

        Returns:
            How many blocks and messages were written and how many were skipped.

        Raises:
            ValueError: A record is invalid (the message says which and why): a bad
                name, a lone surrogate, a number too large to store, a share above
                the block's permission...
            AlreadyExistsError: A conflict with ``on_conflict="error"``.
            CharLimitError: A block's value is longer than its ``char_limit`` in a
                ``hard`` store; the details give its ``label``, ``chars`` and
                ``char_limit``. Nothing is imported.
        """
        ...

    async def close(self) -> None:
        """Release connections. The store cannot be used afterwards."""
        ...
