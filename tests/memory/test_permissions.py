"""Contract: every write operation x every permission level goes through one gate.

The expected verdicts are written out here from DESIGN §4 (not read from ``RULES``),
so the table in the code is checked against the design, and each write is run for
real against the store, as the owner and as an agent the block is shared with.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import pytest

from satchel import ConsentRequiredError, NotFoundError, PermissionDeniedError
from satchel.memory import (
    BlockKind,
    ConsentRequest,
    MemoryStore,
    Operation,
    Permission,
    Verdict,
)
from satchel.memory._permissions import RULES

from .conftest import StoreFactory

pytestmark = pytest.mark.anyio

P = Permission
A, C, D = Verdict.ALLOW, Verdict.CONSENT, Verdict.DENY

# DESIGN §4, plus the two rows the design leaves open (kind change and share follow
# overwrite). Columns: read_only, partner, human, append, read_write, admin.
EXPECTED: dict[Operation, tuple[Verdict, ...]] = {
    Operation.APPEND: (D, C, C, A, A, A),
    Operation.OVERWRITE: (D, C, C, D, A, A),
    Operation.KIND_CHANGE: (D, C, C, D, A, A),
    Operation.SHARE: (D, C, C, D, A, A),
    Operation.DELETE: (D, D, D, D, D, A),
}
LEVELS = list(Permission)


def test_permission_levels_are_ordered_low_to_high() -> None:
    assert [p.value for p in sorted(Permission)] == [
        "read_only",
        "partner",
        "human",
        "append",
        "read_write",
        "admin",
    ]
    assert P.READ_ONLY < P.PARTNER < P.HUMAN < P.APPEND < P.READ_WRITE < P.ADMIN


@pytest.mark.parametrize("operation", list(Operation))
def test_the_rules_table_matches_the_design(operation: Operation) -> None:
    assert tuple(RULES[operation][level] for level in LEVELS) == EXPECTED[operation]


Run = Callable[[MemoryStore, str, str], Awaitable[object]]


@dataclass(frozen=True)
class WriteCase:
    name: str
    operation: Operation
    kind: BlockKind
    run: Run


async def _swap(store: MemoryStore, actor: str, label: str) -> object:
    await store.create_block(actor, "spare", "spare text", kind=BlockKind.ARCHIVAL)
    return await store.swap_blocks(actor, label, "spare")


CASES = [
    WriteCase(
        "append",
        Operation.APPEND,
        BlockKind.CORE,
        lambda s, a, lbl: s.append_to_block(a, lbl, "more"),
    ),
    WriteCase(
        "set",
        Operation.OVERWRITE,
        BlockKind.CORE,
        lambda s, a, lbl: s.update_block_text(a, lbl, "new"),
    ),
    WriteCase(
        "replace",
        Operation.OVERWRITE,
        BlockKind.CORE,
        lambda s, a, lbl: s.replace_in_block(a, lbl, "original", "changed"),
    ),
    WriteCase(
        "archive",
        Operation.KIND_CHANGE,
        BlockKind.WORKING,
        lambda s, a, lbl: s.set_kind(a, lbl, BlockKind.ARCHIVAL),
    ),
    WriteCase(
        "load",
        Operation.KIND_CHANGE,
        BlockKind.ARCHIVAL,
        lambda s, a, lbl: s.set_kind(a, lbl, BlockKind.WORKING),
    ),
    WriteCase("swap", Operation.KIND_CHANGE, BlockKind.WORKING, _swap),
    WriteCase("delete", Operation.DELETE, BlockKind.CORE, lambda s, a, lbl: s.delete_block(a, lbl)),
    WriteCase(
        "share",
        Operation.SHARE,
        BlockKind.CORE,
        lambda s, a, lbl: s.share_block(a, lbl, "carol", P.READ_ONLY),
    ),
    WriteCase(
        "unshare",
        Operation.SHARE,
        BlockKind.CORE,
        lambda s, a, lbl: s.unshare_block(a, lbl, "carol"),
    ),
]


class RecordingConsent:
    """A consent handler that answers ``approve`` and records what it was asked."""

    def __init__(self, approve: bool) -> None:
        self.approve = approve
        self.requests: list[ConsentRequest] = []

    async def __call__(self, request: ConsentRequest, /) -> bool:
        self.requests.append(request)
        return self.approve


@pytest.mark.parametrize("handler", ["none", "approve", "refuse"])
@pytest.mark.parametrize("actor", ["owner", "recipient"])
@pytest.mark.parametrize("level", LEVELS, ids=[p.value for p in LEVELS])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_every_write_obeys_the_table_at_every_level(
    make_store: StoreFactory, case: WriteCase, level: Permission, actor: str, handler: str
) -> None:
    consent = None if handler == "none" else RecordingConsent(handler == "approve")
    store = await make_store(consent=consent)
    if actor == "owner":
        await store.create_block("ada", "block", "original", kind=case.kind, permission=level)
        agent = "ada"
        expected = EXPECTED[case.operation][LEVELS.index(level)]
    else:
        await store.create_block("ada", "block", "original", kind=case.kind, permission=P.ADMIN)
        if consent is not None:
            consent.approve = True
        await store.share_block("ada", "block", "bob", level)
        if consent is not None:
            consent.approve = handler == "approve"
        agent = "bob"
        expected = (
            D
            if case.operation is Operation.SHARE
            else EXPECTED[case.operation][LEVELS.index(level)]
        )
    before = await store.get_block("ada", "block")

    outcome: type[Exception] | None = None
    if expected is D or (expected is C and handler == "refuse"):
        outcome = PermissionDeniedError
    elif expected is C and handler == "none":
        outcome = ConsentRequiredError
    if outcome is None:
        try:
            await case.run(store, agent, "block")
        except NotFoundError:
            assert case.name == "unshare"  # passed the gate; "carol" had no share
        if case.name == "delete":
            with pytest.raises(NotFoundError):
                await store.get_block("ada", "block")
        elif case.name != "unshare":
            assert (await store.get_block("ada", "block")).version > before.version
    else:
        with pytest.raises(outcome) as info:
            await case.run(store, agent, "block")
        assert info.value.details["operation"] == case.operation.value
        after = await store.get_block("ada", "block")
        assert (after.value, after.kind, after.version) == (
            before.value,
            before.kind,
            before.version,
        )
    if isinstance(consent, RecordingConsent):
        asked = [r for r in consent.requests if r.agent == agent and r.label == "block"]
        if expected is C:
            assert len(asked) == 1
            request = asked[0]
            assert request.scope == "memory_edit"
            assert (request.owner, request.agent) == ("ada", agent)
            assert request.operation is case.operation
            assert request.permission is level
            assert request.reason
        else:
            assert asked == []


async def test_sharing_above_the_blocks_own_permission_is_denied(store: MemoryStore) -> None:
    await store.create_block("ada", "block", "x", permission=P.READ_WRITE)
    with pytest.raises(PermissionDeniedError, match="above"):
        await store.share_block("ada", "block", "bob", P.ADMIN)
    shared = await store.share_block("ada", "block", "bob", P.READ_WRITE)
    assert shared.shares == {"bob": P.READ_WRITE}


async def test_an_agent_without_a_share_cannot_even_read(store: MemoryStore) -> None:
    await store.create_block("ada", "secret", "x", permission=P.ADMIN)
    with pytest.raises(NotFoundError):
        await store.get_block("eve", "secret")
    with pytest.raises(NotFoundError):
        await store.get_block("eve", "ada/secret")
    with pytest.raises(NotFoundError):
        await store.append_to_block("eve", "ada/secret", "boo")
    with pytest.raises(NotFoundError):
        await store.delete_block("eve", "ada/secret")


async def test_a_consent_handler_is_not_asked_for_allowed_writes(
    make_store: StoreFactory,
) -> None:
    consent = RecordingConsent(approve=False)
    store = await make_store(consent=consent)
    await store.create_block("ada", "block", "x")
    await store.append_to_block("ada", "block", "y")
    await store.update_block_text("ada", "block", "z")
    assert consent.requests == []
