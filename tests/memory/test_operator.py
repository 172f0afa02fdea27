"""Contract: the operator's edit and delete (``GatedStore.operator_edit`` and
``operator_delete``) change a block as its human operator, past the permission gate,
in one transaction at the version the operator saw, on both backends."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel import (
    CharLimitError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    VersionConflictError,
)
from satchel.memory import BlockKind, Domain, GatedStore, MemoryStore, Permission

from .conftest import BACKENDS, PostgresDatabases, open_store

pytestmark = pytest.mark.anyio


def gated(store: MemoryStore) -> GatedStore:
    assert isinstance(store, GatedStore)
    return store


@pytest.fixture(params=BACKENDS)
async def two_stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[GatedStore, GatedStore]]:
    """Two stores on one database, as the console's process and a model's ``satchel
    serve`` process have."""
    databases: PostgresDatabases | None = (
        request.getfixturevalue("postgres_databases") if request.param == "postgres" else None
    )
    url = databases.fresh() if databases is not None else None
    first = gated(await open_store(request.param, tmp_path, url=url))
    second = gated(await open_store(request.param, tmp_path, url=url))
    yield first, second
    await first.close()
    await second.close()


async def test_an_edit_changes_text_description_permission_and_limit_in_one_version(
    store: MemoryStore,
) -> None:
    s = gated(store)
    before = await s.create_block(
        "ada", "rules", "Never share the address.", description="Rules", char_limit=100
    )

    after = await s.operator_edit(
        "ada",
        "rules",
        expected_version=before.version,
        value="Share nothing.",
        description="House rules",
        permission=Permission.READ_ONLY,
        char_limit=20,
    )

    assert after.version == before.version + 1
    assert (after.value, after.description, after.permission, after.char_limit) == (
        "Share nothing.",
        "House rules",
        Permission.READ_ONLY,
        20,
    )
    assert await s.get_block("ada", "rules") == after
    history = await s.block_history("ada", "rules")
    assert [(v.version, v.value, v.permission, v.char_limit) for v in history] == [
        (1, "Never share the address.", Permission.READ_WRITE, 100)
    ]
    assert history[0].description == "Rules"


async def test_the_text_of_a_read_only_block_changes_and_it_stays_read_only(
    store: MemoryStore,
) -> None:
    s = gated(store)
    before = await s.create_block("ada", "rules", "Be kind.", permission=Permission.READ_ONLY)

    after = await s.operator_edit("ada", "rules", expected_version=1, value="Be brief.")

    assert (after.value, after.permission, after.version) == (
        "Be brief.",
        Permission.READ_ONLY,
        before.version + 1,
    )
    with pytest.raises(PermissionDeniedError):  # the model is still held by the table
        await s.update_block_text("ada", "rules", "Be mean.")
    assert [v.permission for v in await s.block_history("ada", "rules")] == [Permission.READ_ONLY]


async def test_a_stale_version_changes_nothing_and_leaves_no_history(store: MemoryStore) -> None:
    s = gated(store)
    await s.create_block("ada", "notes", "one", permission=Permission.READ_ONLY)
    await s.operator_edit("ada", "notes", expected_version=1, value="two")
    before = await s.get_block("ada", "notes")

    with pytest.raises(VersionConflictError) as info:
        await s.operator_edit(
            "ada",
            "notes",
            expected_version=1,
            value="stale",
            permission=Permission.ADMIN,
            char_limit=3,
            kind=BlockKind.ARCHIVAL,
        )
    with pytest.raises(VersionConflictError):
        await s.operator_delete("ada", "notes", expected_version=1)

    assert info.value.details["current_version"] == 2
    assert await s.get_block("ada", "notes") == before
    assert [v.version for v in await s.block_history("ada", "notes")] == [1]


async def test_text_and_limit_are_checked_together_and_a_refusal_changes_nothing(
    store: MemoryStore,
) -> None:
    s = gated(store)
    await s.create_block("ada", "notes", "0123456789", char_limit=10)

    # lowering the limit and shortening the text in one edit
    shorter = await s.operator_edit("ada", "notes", expected_version=1, value="01234", char_limit=5)
    assert (shorter.value, shorter.char_limit, shorter.version) == ("01234", 5, 2)
    with pytest.raises(CharLimitError, match="over the limit of 5") as info:
        await s.operator_edit("ada", "notes", expected_version=2, value="0123456")
    with pytest.raises(CharLimitError):
        await s.operator_edit("ada", "notes", expected_version=2, char_limit=4)

    assert info.value.details["attempted_chars"] == 7
    assert await s.get_block("ada", "notes") == shorter


async def test_an_edit_that_changes_nothing_keeps_the_version(store: MemoryStore) -> None:
    s = gated(store)
    block = await s.create_block("ada", "notes", "same", description="d")

    again = await s.operator_edit(
        "ada",
        "notes",
        expected_version=1,
        value="same",
        description="d",
        permission=Permission.READ_WRITE,
        char_limit=None,
        kind=BlockKind.CORE,
    )

    assert again == block
    assert await s.block_history("ada", "notes") == []


async def test_moving_between_kinds_and_deleting_pass_no_gate(store: MemoryStore) -> None:
    s = gated(store)
    await s.create_block("ada", "rules", "Be kind.", permission=Permission.READ_ONLY)

    archived = await s.operator_edit("ada", "rules", expected_version=1, kind=BlockKind.ARCHIVAL)
    loaded = await s.operator_edit("ada", "rules", expected_version=2, kind=BlockKind.WORKING)
    gone = await s.operator_delete("ada", "rules", expected_version=3)

    assert (archived.kind, archived.permission) == (BlockKind.ARCHIVAL, Permission.READ_ONLY)
    assert (loaded.kind, loaded.version) == (BlockKind.WORKING, 3)
    assert gone == loaded
    with pytest.raises(NotFoundError):
        await s.get_block("ada", "rules")


async def test_a_lower_permission_lowers_the_shares_and_only_the_owner_edits(
    store: MemoryStore,
) -> None:
    s = gated(store)
    await s.create_block("ada", "plan", "Kyoto.")
    await s.share_block("ada", "plan", "bob", Permission.READ_WRITE)

    edited = await s.operator_edit(
        "ada", "plan", expected_version=2, value="Osaka.", permission=Permission.APPEND
    )

    assert edited.shares == {"bob": Permission.APPEND}
    assert (await s.get_block("bob", "plan")).shares == {"bob": Permission.APPEND}
    with pytest.raises(PermissionDeniedError, match="only the owner"):
        await s.operator_edit("bob", "plan", expected_version=3, value="Rome.")
    with pytest.raises(PermissionDeniedError, match="only the owner"):
        await s.operator_delete("bob", "plan", expected_version=3)
    assert (await s.get_block("ada", "plan")).value == "Osaka."


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"expected_version": "1"}, "expected_version must be a whole number"),
        ({"expected_version": True}, "expected_version must be a whole number"),
        ({"expected_version": -1}, "expected_version must be 0 to"),
        ({"expected_version": 2**40}, "expected_version must be 0 to"),
        ({"value": 7}, "value must be text"),
        ({"value": "bad \udc80 text"}, "lone surrogate"),
        ({"description": b"bytes"}, "description must be text"),
        ({"permission": "root"}, "is not a permission"),
        ({"kind": "attic"}, "is not a kind of block"),
        ({"char_limit": -3}, "char_limit must be 0 to"),
        ({"char_limit": 2.5}, "char_limit must be a whole number"),
        ({"char_limit": 2**40}, "char_limit must be 0 to"),
    ],
)
async def test_bad_input_is_a_clear_error_and_changes_nothing(
    store: MemoryStore, arguments: dict[str, Any], words: str
) -> None:
    s = gated(store)
    before = await s.create_block("ada", "notes", "keep me", permission=Permission.READ_ONLY)
    call: dict[str, Any] = {"expected_version": 1, **arguments}

    with pytest.raises(InvalidInputError, match=words):
        await s.operator_edit("ada", "notes", **call)

    assert await s.get_block("ada", "notes") == before


async def test_bad_names_and_missing_blocks_are_clear_errors(store: MemoryStore) -> None:
    s = gated(store)
    await s.create_block("ada", "notes", "keep me")

    with pytest.raises(InvalidInputError, match="invalid agent name"):
        await s.operator_edit("a/b", "notes", expected_version=1, value="x")
    with pytest.raises(NotFoundError):
        await s.operator_edit("ada", "nothing", expected_version=1, value="x")
    with pytest.raises(NotFoundError):
        await s.operator_delete("ada", "nothing", expected_version=1)
    with pytest.raises(InvalidInputError):
        await s.operator_delete("ada", "notes", expected_version=-1)
    assert (await s.get_block("ada", "notes")).value == "keep me"


async def test_a_new_text_is_embedded_with_the_edit(store: MemoryStore) -> None:
    s = gated(store)
    await s.create_block("ada", "trip", "Kyoto in April", kind=BlockKind.ARCHIVAL)

    await s.operator_edit("ada", "trip", expected_version=1, value="Lisbon in June")

    hits = await s.search("ada", "Lisbon June", domains=Domain.ARCHIVAL_MEMORY, mode="vector")
    assert [hit.label for hit in hits][:1] == ["trip"]
    assert "Lisbon in June" in hits[0].text
    stale = await s.search("ada", "Kyoto", domains=Domain.ARCHIVAL_MEMORY, mode="bm25")
    assert stale == []


_TEXT = st.characters(blacklist_categories=["Cs"])  # any text: every character but lone surrogates


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(text=st.text(_TEXT, max_size=200), description=st.text(_TEXT, max_size=40))
async def test_any_text_is_stored_exactly(store: MemoryStore, text: str, description: str) -> None:
    s = gated(store)
    await s.ensure_agent("ada")
    label = f"t{len(await s.list_blocks('ada'))}"
    block = await s.create_block("ada", label, "start", permission=Permission.READ_ONLY)
    edited = await s.operator_edit(
        "ada", label, expected_version=block.version, value=text, description=description
    )
    assert (edited.value, edited.description) == (text, description)
    assert await s.get_block("ada", label) == edited


async def test_no_other_store_ever_sees_a_loosened_permission_during_many_edits(
    two_stores: tuple[GatedStore, GatedStore],
) -> None:
    """The operator edits a read-only block 30 times (text, then delete) while a model
    on a second store of the same database reads it and tries to write it without a
    pause: every read shows ``read_only``, every write is denied, and the block moves
    exactly one version per edit."""
    operator, model = two_stores
    await operator.create_block("ada", "rules", "v0", permission=Permission.READ_ONLY)
    seen: list[Permission] = []
    versions: set[int] = set()
    landed: list[str] = []
    denied = 0
    started, done = anyio.Event(), anyio.Event()

    async def watch() -> None:
        nonlocal denied
        while not done.is_set():
            with contextlib.suppress(NotFoundError):
                block = await model.get_block("ada", "rules")
                seen.append(block.permission)
                versions.add(block.version)
            started.set()
            for write in (
                lambda: model.append_to_block("ada", "rules", "(model)"),
                lambda: model.update_block_text("ada", "rules", "(model)"),
                lambda: model.delete_block("ada", "rules"),
            ):
                try:
                    await write()
                    landed.append("model write")
                except PermissionDeniedError:
                    denied += 1
                except NotFoundError:
                    pass

    async def edit() -> None:
        await started.wait()
        for n in range(1, 31):
            await operator.operator_edit(
                "ada", "rules", expected_version=n, value=f"v{n}", permission=Permission.READ_ONLY
            )
            await anyio.lowlevel.checkpoint()  # the watcher runs between edits too
        await operator.operator_delete("ada", "rules", expected_version=31)
        done.set()

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            tg.start_soon(edit)

    assert landed == []
    assert set(seen) == {Permission.READ_ONLY}
    assert len(versions) > 1  # the watcher ran while the edits went on
    assert denied >= 3
    with pytest.raises(NotFoundError):
        await model.get_block("ada", "rules")


async def test_an_edit_racing_a_models_write_either_wins_whole_or_changes_nothing(
    two_stores: tuple[GatedStore, GatedStore],
) -> None:
    """A model appends from the second store while the operator edits at the version
    the page showed: the first to commit wins; the other (the operator's edit, on the
    version) is refused whole, and the history holds each step once."""
    operator, model = two_stores
    await operator.create_block("ada", "notes", "start")
    shown = await operator.get_block("ada", "notes")
    await model.append_to_block("ada", "notes", "(model)")

    with pytest.raises(VersionConflictError):
        await operator.operator_edit(
            "ada",
            "notes",
            expected_version=shown.version,
            value="operator",
            permission=Permission.READ_ONLY,
        )

    after = await operator.get_block("ada", "notes")
    assert (after.value, after.permission, after.version) == (
        "start\n(model)",
        Permission.READ_WRITE,
        2,
    )
    assert [v.value for v in await operator.block_history("ada", "notes")] == ["start"]


def test_only_the_console_calls_the_operators_writes() -> None:
    """No model-facing code (built-in tools, the MCP server, the agent runtime) reaches
    the operator's writes: outside the memory package only the console calls them."""
    import satchel

    root = Path(satchel.__file__).parent
    callers = {
        path.relative_to(root).parts[0]
        for path in root.rglob("*.py")
        if "operator_edit(" in path.read_text() or "operator_delete(" in path.read_text()
    }
    assert callers == {"memory", "console"}
