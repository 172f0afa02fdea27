"""A third backend gets the permission gate and consent for free.

:class:`DictBackend` keeps blocks in a dict and implements only the database steps the
block tests need: it holds no permission table, never calls ``authorize`` and never
sees a consent handler. Wrapped in :class:`GatedStore`, it enforces DESIGN §4's table,
asks the consent handler (a real :class:`PermissionBroker` too), retries the gate when
the level moves between the gate and the write, and applies the char-limit mode.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from typing import Any, cast

import anyio
import pytest

from satchel import CharLimitError, ConsentRequiredError, NotFoundError, PermissionDeniedError
from satchel.consent import Decision, InMemoryApprovalStore, PermissionBroker
from satchel.memory import (
    Block,
    BlockKind,
    ConsentRequest,
    GatedStore,
    MemoryBackend,
    MemoryStore,
    Permission,
    RequestOrigin,
)
from satchel.memory._backend import NewBlock
from satchel.memory._block_rules import (
    LevelChanged,
    as_seen_by,
    check_limit,
    check_new_value,
    check_version,
    only_match,
    replace_once,
)
from satchel.memory._models import utc_now

pytestmark = pytest.mark.anyio


class DictBackend:
    """Blocks in a dict: the database steps only (each runs without awaiting, so each
    is atomic on the event loop)."""

    def __init__(self) -> None:
        self.rows: dict[int, Block] = {}
        self._pks = itertools.count(1)
        self.vectors_ok = False

    def use_model(self, model: str | None, dim: int | None) -> None:
        pass

    async def close(self) -> None:
        pass

    def _checked(self, pk: int, agent: str, level: Permission) -> Block:
        block = self.rows[pk]
        current = block.permission if block.agent == agent else block.shares.get(agent)
        if current != level:
            raise LevelChanged("the level moved")
        return block

    def _write(self, pk: int, block: Block, **update: Any) -> Block:
        update |= {"version": block.version + 1, "updated_at": utc_now()}
        self.rows[pk] = block.model_copy(update=update)
        return self.rows[pk]

    async def resolve(self, agent: str, labels: Sequence[str]) -> list[tuple[int, Block]]:
        out: list[tuple[int, Block]] = []
        for label in labels:
            owner, _, bare = label.rpartition("/")
            found = [
                (pk, b)
                for pk, b in self.rows.items()
                if b.label == bare
                and (b.agent == owner if owner else b.agent == agent or agent in b.shares)
                and (b.agent == agent or agent in b.shares)
            ]
            own = [item for item in found if item[1].agent == agent]
            out.append(only_match(own or found, agent, label))
        return out

    async def resolve_id(self, agent: str, block_id: str) -> Block:
        for block in self.rows.values():
            if block.id == block_id and (block.agent == agent or agent in block.shares):
                return as_seen_by(block, agent)
        raise NotFoundError(f"no block with id {block_id!r}")

    async def list_visible(self, agent: str, kinds: Collection[BlockKind] | None) -> list[Block]:
        return [
            as_seen_by(b, agent)
            for b in self.rows.values()
            if (b.agent == agent or agent in b.shares) and (kinds is None or b.kind in kinds)
        ]

    async def list_visible_page(
        self, agent: str, kinds: Collection[BlockKind] | None, offset: int, limit: int
    ) -> tuple[list[Block], int]:
        rank = {BlockKind.CORE: 0, BlockKind.WORKING: 1, BlockKind.ARCHIVAL: 2}
        seen = sorted(
            await self.list_visible(agent, kinds), key=lambda b: (rank[b.kind], b.agent, b.label)
        )
        return seen[offset : offset + limit], len(seen)

    async def insert_block(self, new: NewBlock, vector: Any) -> Block:
        hard = new["hard_limit"]
        check_new_value(new["agent"], new["label"], new["value"], new["char_limit"], hard=hard)
        now = utc_now()
        fields = {k: v for k, v in new.items() if k != "hard_limit"}
        fields["metadata"] = fields["metadata"] or {}
        pk = next(self._pks)
        self.rows[pk] = Block.model_validate(
            {**fields, "id": f"b{pk}", "created_at": now, "updated_at": now}
        )
        return self.rows[pk]

    async def append(
        self,
        agent: str,
        pk: int,
        level: Permission,
        text: str,
        separator: str,
        *,
        hard_limit: bool,
    ) -> Block:
        block = self._checked(pk, agent, level)
        value = f"{block.value}{separator}{text}" if block.value else text
        check_limit(block, len(value), hard=hard_limit)
        return self._write(pk, block, value=value)

    async def set_text(
        self,
        agent: str,
        pk: int,
        level: Permission,
        value: str,
        *,
        expected_version: int | None,
        description: str | None,
        vector: Any,
        hard_limit: bool,
    ) -> Block:
        block = self._checked(pk, agent, level)
        check_version(block, expected_version)
        check_limit(block, len(value), hard=hard_limit)
        return self._write(pk, block, value=value, description=description or block.description)

    async def replace(
        self,
        agent: str,
        pk: int,
        level: Permission,
        old: str,
        new: str,
        *,
        expected_version: int | None,
        hard_limit: bool,
    ) -> Block:
        block = self._checked(pk, agent, level)
        check_version(block, expected_version)
        value = replace_once(block, old, new)
        check_limit(block, len(value), hard=hard_limit)
        return self._write(pk, block, value=value)

    async def delete(
        self, agent: str, pk: int, level: Permission, *, expected_version: int | None
    ) -> Block:
        block = self._checked(pk, agent, level)
        check_version(block, expected_version)
        return self.rows.pop(pk)

    async def set_share(
        self,
        agent: str,
        pk: int,
        level: Permission,
        recipient: str,
        permission: Permission | None,
    ) -> Block:
        block = self._checked(pk, agent, level)
        shares = {k: v for k, v in block.shares.items() if k != recipient}
        if permission is not None:
            shares[recipient] = permission
        return self._write(pk, block, shares=shares)

    def lower(self, label: str, permission: Permission) -> None:
        """An operator lowers a block's permission (as ``configure`` would)."""
        [(pk, block)] = [(pk, b) for pk, b in self.rows.items() if b.label == label]
        self._write(pk, block, permission=permission)


def gated(backend: DictBackend, **options: Any) -> GatedStore:
    return GatedStore(cast(MemoryBackend, backend), embedder=None, **options)


class Recorder:
    """A consent handler that answers ``answer`` and keeps what it was asked."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[ConsentRequest] = []

    async def __call__(self, request: ConsentRequest, /) -> bool:
        self.asked.append(request)
        return self.answer


async def test_the_gated_dict_backend_is_a_memory_store_that_reads_and_writes() -> None:
    store = gated(DictBackend())
    assert isinstance(store, MemoryStore)
    await store.create_block("ada", "notes", "one")
    assert (await store.append_to_block("ada", "notes", "two")).value == "one\ntwo"
    assert (await store.replace_in_block("ada", "notes", "two", "2")).value == "one\n2"
    assert [b.label for b in await store.list_blocks("ada")] == ["notes"]
    page = await store.list_blocks_page("ada", limit=1)
    assert ([b.label for b in page.blocks], page.total) == (["notes"], 1)


async def test_a_read_only_block_refuses_every_write_without_asking_anyone() -> None:
    backend, handler = DictBackend(), Recorder(True)
    store = gated(backend, consent=handler)
    await store.create_block("ada", "rules", "be kind", permission=Permission.READ_ONLY)
    for write in (
        store.append_to_block("ada", "rules", "x"),
        store.update_block_text("ada", "rules", "x"),
        store.delete_block("ada", "rules"),
        store.share_block("ada", "rules", "bob", Permission.READ_ONLY),
    ):
        with pytest.raises(PermissionDeniedError):
            await write
    assert handler.asked == []
    assert (await store.get_block("ada", "rules")).value == "be kind"
    assert (await store.get_block("ada", "rules")).version == 1


async def test_a_human_block_asks_the_consent_handler_and_writes_only_when_approved() -> None:
    backend = DictBackend()
    refuse, approve = Recorder(False), Recorder(True)
    await gated(backend).create_block("ada", "human", "Ada", permission=Permission.HUMAN)
    with pytest.raises(PermissionDeniedError):
        await gated(backend, consent=refuse).append_to_block("ada", "human", "likes tea")
    assert (await gated(backend).get_block("ada", "human")).value == "Ada"
    store = gated(backend, consent=approve)
    after = await store.append_to_block(
        "ada", "human", "likes tea", origin=RequestOrigin(channel="cli")
    )
    assert after.value == "Ada\nlikes tea"
    [asked] = approve.asked
    assert (asked.operation, asked.label, asked.owner, asked.agent, asked.permission) == (
        "append",
        "human",
        "ada",
        "ada",
        Permission.HUMAN,
    )
    assert "append 9 characters" in asked.reason
    assert asked.origin == "cli"


async def test_without_a_consent_handler_a_write_that_needs_consent_is_refused() -> None:
    store = gated(DictBackend())
    await store.create_block("ada", "human", "Ada", permission=Permission.PARTNER)
    with pytest.raises(ConsentRequiredError):
        await store.update_block_text("ada", "human", "Eve")
    assert (await store.get_block("ada", "human")).value == "Ada"


async def test_a_recipient_acts_at_its_share_level_and_only_admin_may_delete() -> None:
    store = gated(DictBackend(), consent=Recorder(True))
    await store.create_block("ada", "plan", "v1")
    await store.share_block("ada", "plan", "bob", Permission.READ_ONLY)
    with pytest.raises(PermissionDeniedError):
        await store.append_to_block("bob", "plan", "mine")
    with pytest.raises(PermissionDeniedError):
        await store.delete_block("ada", "plan")  # read_write is below admin
    with pytest.raises(ValueError, match="own owner"):
        await store.share_block("ada", "plan", "ada", Permission.READ_ONLY)
    assert (await store.get_block("bob", "ada/plan")).shares == {"bob": Permission.READ_ONLY}


async def test_a_permission_lowered_while_consent_is_asked_makes_the_gate_run_again() -> None:
    backend = DictBackend()
    await gated(backend).create_block("ada", "human", "Ada", permission=Permission.HUMAN)

    async def lower_then_approve(request: ConsentRequest, /) -> bool:
        backend.lower("human", Permission.READ_ONLY)  # an operator acts meanwhile
        return True

    store = gated(backend, consent=lower_then_approve)
    with pytest.raises(PermissionDeniedError):
        await store.append_to_block("ada", "human", "sneaked in")
    assert (await store.get_block("ada", "human")).value == "Ada"


async def test_the_char_limit_mode_is_the_stores_not_the_backends() -> None:
    backend = DictBackend()
    await gated(backend).create_block("ada", "short", "abc", char_limit=5)
    with pytest.raises(CharLimitError):
        await gated(backend).append_to_block("ada", "short", "defg")
    soft = gated(backend, char_limit_mode="soft")
    assert (await soft.append_to_block("ada", "short", "defg")).value == "abc\ndefg"


async def test_a_permission_broker_decides_a_write_to_the_dict_backend() -> None:
    backend = DictBackend()
    await gated(backend).create_block("ada", "human", "Ada", permission=Permission.HUMAN)
    async with PermissionBroker(InMemoryApprovalStore(), poll_interval=0.01) as broker:
        store = gated(backend, consent=broker)
        written: list[Block] = []

        async def write() -> None:
            written.append(await store.append_to_block("ada", "human", "likes tea"))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(write)
                while not (pending := await broker.pending()):
                    await anyio.wait_all_tasks_blocked()
                [request] = pending
                assert request.scope.kind == "memory_edit"
                assert (request.scope.label, request.scope.operation) == ("human", "append")
                await broker.resolve(request.id, Decision.approve_once(), by="test")
    assert [b.value for b in written] == ["Ada\nlikes tea"]
