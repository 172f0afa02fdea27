"""``context load``/``archive``/``swap`` under another label (the seed's semantics, issue
18): a load under a new label copies the archival entry and keeps it; an archive into
another label writes the entry under the overwrite rule and removes the block, which
needs admin; a swap with targets checks everything before its first write. Real SQLite,
every refusal structured and nothing lost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel.memory import Block, BlockKind, Permission

from .conftest import Consent, Kit, make_kit

pytestmark = pytest.mark.anyio

ARCHIVAL = BlockKind.ARCHIVAL
WORKING = BlockKind.WORKING


async def _blocks(kit: Kit, agent: str = "ada") -> dict[str, Block]:
    return {b.label: b for b in await kit.store.list_blocks(agent)}


def _load(label: str, target: str | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"operation": "load", "label": label}
    return args if target is None else {**args, "target_label": target}


def _archive(label: str, target: str | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"operation": "archive", "label": label}
    return args if target is None else {**args, "target_label": target}


# -- load --------------------------------------------------------------------------------


async def test_load_under_a_new_label_creates_a_working_copy_and_keeps_the_entry(
    kit: Kit,
) -> None:
    entry = await kit.store.create_block(
        "ada", "trip", "Kyoto in April", kind=ARCHIVAL, description="Travel", tags=["go"]
    )

    out = await kit.ok("context", _load("trip", "trip_now"))
    found = await kit.ok("search", {"domain": "archival_memory", "query": "Kyoto"})

    blocks = await _blocks(kit)
    copy = blocks["trip_now"]
    assert out["block"]["label"] == "trip_now"
    assert "the entry stays" in out["message"]
    assert (copy.kind, copy.value, copy.description, copy.tags) == (
        WORKING,
        "Kyoto in April",
        "Travel",
        ("go",),
    )
    assert copy.metadata == {"loaded_from": "trip", "loaded_from_id": entry.id}
    assert blocks["trip"] == entry  # the archival entry is untouched
    assert [r["label"] for r in found["results"]] == ["trip"]


async def test_load_without_a_target_or_under_the_same_label_moves_the_entry(kit: Kit) -> None:
    await kit.store.create_block("ada", "a", "x", kind=ARCHIVAL)
    await kit.store.create_block("ada", "b", "y", kind=ARCHIVAL)

    await kit.ok("context", _load("a"))
    await kit.ok("context", _load("b", "b"))

    blocks = await _blocks(kit)
    assert sorted(blocks) == ["a", "b"]
    assert {b.kind for b in blocks.values()} == {WORKING}


async def test_load_into_a_taken_label_is_a_retry_and_changes_nothing(kit: Kit) -> None:
    await kit.store.create_block("ada", "trip", "Kyoto", kind=ARCHIVAL)
    await kit.store.create_block("ada", "plan", "Write docs.", kind=WORKING)
    before = await _blocks(kit)

    error = await kit.error("context", _load("trip", "plan"))

    assert error.kind == "retry"
    assert "'plan' already exists" in error.message
    assert error.details == {"label": "trip", "target_label": "plan"}
    assert await _blocks(kit) == before


async def test_load_of_a_missing_entry_fails_naming_it(kit: Kit) -> None:
    error = await kit.error("context", _load("nope", "copy"))

    assert error.kind == "failed"
    assert "'nope'" in error.message
    assert await _blocks(kit) == {}


async def test_load_of_a_block_in_context_under_a_new_label_is_a_retry(kit: Kit) -> None:
    await kit.store.create_block("ada", "plan", "x", kind=WORKING)

    error = await kit.error("context", _load("plan", "plan2"))

    assert error.kind == "retry"
    assert "only archival entries can be loaded" in error.message
    assert sorted(await _blocks(kit)) == ["plan"]


async def test_load_into_another_agents_label_is_denied(kit: Kit) -> None:
    await kit.store.create_block("ada", "trip", "Kyoto", kind=ARCHIVAL)

    error = await kit.error("context", _load("trip", "bob/trip"))

    assert error.kind == "denied"
    assert "own memory" in error.message
    assert await kit.store.list_blocks("bob") == []


async def test_a_read_only_entry_loads_as_a_read_only_copy_but_not_in_place(kit: Kit) -> None:
    await kit.store.create_block(
        "ada", "rules", "Be kind.", kind=ARCHIVAL, permission=Permission.READ_ONLY
    )

    in_place = await kit.error("context", _load("rules"))
    await kit.ok("context", _load("rules", "rules_now"))
    edit = await kit.error("context", {"operation": "append", "label": "rules_now", "content": "x"})

    assert in_place.kind == "denied"  # a kind change follows the overwrite row
    blocks = await _blocks(kit)
    assert blocks["rules"].kind is ARCHIVAL
    assert blocks["rules_now"].permission is Permission.READ_ONLY  # no escalation by copy
    assert edit.kind == "denied"


async def test_a_shared_entry_loads_as_the_recipients_own_copy_at_its_share_level(
    kit: Kit,
) -> None:
    await kit.store.create_block("bob", "recipe", "Miso soup", kind=ARCHIVAL)
    await kit.store.share_block("bob", "recipe", "ada", Permission.APPEND)

    await kit.ok("context", _load("bob/recipe", "recipe"))

    copy = await kit.store.get_block("ada", "recipe")
    assert (copy.agent, copy.kind, copy.permission) == ("ada", WORKING, Permission.APPEND)
    assert copy.metadata is not None
    assert copy.metadata["loaded_from"] == "bob/recipe"
    bobs = await kit.store.get_block("bob", "recipe")
    assert (bobs.kind, bobs.value, bobs.version) == (ARCHIVAL, "Miso soup", 2)  # shared: v2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=st.text(max_size=140).filter(lambda t: t != "trip") | st.just("trip_copy"))
def test_any_target_label_loads_a_copy_or_is_refused_and_the_entry_stays(
    tmp_path_factory: pytest.TempPathFactory, target: str
) -> None:
    import anyio

    async def scenario() -> None:
        kit = await make_kit(tmp_path_factory.mktemp("fuzz") / "m.db")
        try:
            await kit.store.create_block("ada", "trip", "Kyoto", kind=ARCHIVAL)
            result = await kit.call("context", _load("trip", target))
            blocks = await _blocks(kit)
        finally:
            await kit.store.close()
        assert blocks["trip"].kind is ARCHIVAL
        assert blocks["trip"].value == "Kyoto"
        if result.ok:
            assert blocks[target].value == "Kyoto"
        else:
            assert result.error is not None
            assert result.error.kind in ("retry", "invalid_arguments", "denied")
            assert sorted(blocks) == ["trip"]

    anyio.run(scenario)


# -- archive -----------------------------------------------------------------------------


async def test_archive_into_an_existing_entry_overwrites_it_and_removes_the_block(
    kit: Kit,
) -> None:
    await kit.store.create_block("ada", "notes", "old notes", kind=ARCHIVAL)
    await kit.store.create_block(
        "ada", "draft", "new notes", kind=WORKING, permission=Permission.ADMIN
    )

    out = await kit.ok("context", _archive("draft", "notes"))

    blocks = await _blocks(kit)
    assert sorted(blocks) == ["notes"]
    assert (blocks["notes"].value, blocks["notes"].version) == ("new notes", 2)
    assert out["block"]["label"] == "notes"
    assert "removed" in out["message"]


async def test_archive_into_a_new_label_creates_the_entry(kit: Kit) -> None:
    await kit.store.create_block(
        "ada", "draft", "text", kind=WORKING, permission=Permission.ADMIN, description="d"
    )

    await kit.ok("context", _archive("draft", "kept"))

    blocks = await _blocks(kit)
    assert sorted(blocks) == ["kept"]
    assert (blocks["kept"].kind, blocks["kept"].value) == (ARCHIVAL, "text")
    assert (blocks["kept"].description, blocks["kept"].permission) == ("d", Permission.ADMIN)


async def test_a_working_copy_made_by_load_archives_back_into_its_entry(kit: Kit) -> None:
    await kit.store.create_block(
        "ada", "notes", "v1", kind=ARCHIVAL, permission=Permission.ADMIN
    )  # as recall insert makes them
    await kit.ok("context", _load("notes", "draft"))
    await kit.ok("context", {"operation": "set", "label": "draft", "value": "v2"})

    await kit.ok("context", _archive("draft", "notes"))

    blocks = await _blocks(kit)
    assert sorted(blocks) == ["notes"]
    assert blocks["notes"].value == "v2"


async def test_archive_into_another_label_needs_admin_to_remove_the_block(kit: Kit) -> None:
    await kit.store.create_block("ada", "notes", "old", kind=ARCHIVAL)
    await kit.store.create_block("ada", "draft", "new", kind=WORKING)  # read_write
    before = await _blocks(kit)

    error = await kit.error("context", _archive("draft", "notes"))
    fresh = await kit.error("context", _archive("draft", "elsewhere"))

    assert error.kind == fresh.kind == "denied"
    assert "needs admin" in error.message
    assert error.details["permission"] == "read_write"
    assert await _blocks(kit) == before  # nothing written, nothing removed


@pytest.mark.parametrize("level", [Permission.APPEND, Permission.READ_ONLY])
async def test_archive_into_an_entry_the_overwrite_rule_denies_changes_nothing(
    kit: Kit, level: Permission
) -> None:
    await kit.store.create_block("ada", "notes", "old", kind=ARCHIVAL, permission=level)
    await kit.store.create_block("ada", "draft", "new", kind=WORKING, permission=Permission.ADMIN)
    before = await _blocks(kit)

    error = await kit.error("context", _archive("draft", "notes"))

    assert error.kind == "denied"
    assert error.details["operation"] == "overwrite"
    assert await _blocks(kit) == before


@pytest.mark.parametrize("answer", [True, False])
async def test_archive_into_a_human_entry_asks_consent_first(tmp_path: Path, answer: bool) -> None:
    consent = Consent(answer)
    kit = await make_kit(tmp_path / "m.db", consent=consent)
    try:
        await kit.store.create_block(
            "ada", "notes", "old", kind=ARCHIVAL, permission=Permission.HUMAN
        )
        await kit.store.create_block(
            "ada", "draft", "new", kind=WORKING, permission=Permission.ADMIN
        )
        result = await kit.call("context", _archive("draft", "notes"))
        blocks = await _blocks(kit)
    finally:
        await kit.store.close()

    assert [(r.label, r.operation.value, r.origin) for r in consent.asked] == [
        ("notes", "overwrite", "test")
    ]
    if answer:
        assert result.ok
        assert sorted(blocks) == ["notes"]
        assert blocks["notes"].value == "new"
    else:
        assert result.error is not None
        assert result.error.kind == "denied"
        assert (blocks["notes"].value, blocks["draft"].value) == ("old", "new")


async def test_archive_into_a_block_in_context_is_a_retry(kit: Kit) -> None:
    await kit.store.create_block("ada", "plan", "x", kind=WORKING)
    await kit.store.create_block("ada", "draft", "y", kind=WORKING, permission=Permission.ADMIN)

    error = await kit.error("context", _archive("draft", "plan"))

    assert error.kind == "retry"
    assert "in context" in error.message
    assert {b.value for b in (await _blocks(kit)).values()} == {"x", "y"}


# -- swap --------------------------------------------------------------------------------


def _swap(**fields: str) -> dict[str, Any]:
    return {"operation": "swap", "archive_label": "now", "load_label": "later", **fields}


async def _swap_blocks(kit: Kit, now: Permission = Permission.ADMIN) -> None:
    await kit.store.create_block("ada", "now", "current", kind=WORKING, permission=now)
    await kit.store.create_block("ada", "later", "next", kind=ARCHIVAL)
    await kit.store.create_block("ada", "log", "old log", kind=ARCHIVAL)


async def test_swap_into_an_archive_target_removes_the_source_and_loads_the_other(
    kit: Kit,
) -> None:
    await _swap_blocks(kit)

    out = await kit.ok("context", _swap(archive_target="log"))

    blocks = await _blocks(kit)
    assert sorted(blocks) == ["later", "log"]
    assert (blocks["log"].value, blocks["later"].kind) == ("current", WORKING)
    assert [b["label"] for b in out["blocks"]] == ["log", "later"]


async def test_removing_the_source_on_swap_needs_admin_and_nothing_changes(kit: Kit) -> None:
    await _swap_blocks(kit, now=Permission.READ_WRITE)
    before = await _blocks(kit)

    error = await kit.error("context", _swap(archive_target="log"))

    assert error.kind == "denied"
    assert "needs admin" in error.message
    assert await _blocks(kit) == before


async def test_swap_with_a_load_target_keeps_the_entry_and_archives_in_place(kit: Kit) -> None:
    await _swap_blocks(kit, now=Permission.READ_WRITE)

    await kit.ok("context", _swap(load_target="later_now"))

    blocks = await _blocks(kit)
    assert (blocks["now"].kind, blocks["later"].kind) == (ARCHIVAL, ARCHIVAL)
    assert (blocks["later_now"].kind, blocks["later_now"].value) == (WORKING, "next")


async def test_a_swap_with_a_taken_load_target_changes_nothing(kit: Kit) -> None:
    await _swap_blocks(kit)
    before = await _blocks(kit)

    error = await kit.error("context", _swap(archive_target="log", load_target="log"))

    assert error.kind == "retry"
    assert "already exists" in error.message
    assert await _blocks(kit) == before


async def test_a_swap_whose_in_place_load_is_denied_writes_nothing(kit: Kit) -> None:
    await kit.store.create_block("ada", "now", "current", kind=WORKING, permission=Permission.ADMIN)
    await kit.store.create_block(
        "ada", "later", "next", kind=ARCHIVAL, permission=Permission.READ_ONLY
    )
    before = await _blocks(kit)

    error = await kit.error("context", _swap(archive_target="kept"))

    assert error.kind == "denied"
    assert "nothing was changed" in error.message
    assert await _blocks(kit) == before


async def test_a_swap_of_one_block_with_itself_is_a_retry(kit: Kit) -> None:
    await _swap_blocks(kit)

    error = await kit.error(
        "context",
        {"operation": "swap", "archive_label": "now", "load_label": "now", "load_target": "x"},
    )

    assert error.kind == "retry"
    assert "two different blocks" in error.message


async def test_a_refused_consent_to_the_second_step_says_the_first_is_done(
    tmp_path: Path,
) -> None:
    consent = Consent(answer=False)
    kit = await make_kit(tmp_path / "m.db", consent=consent)
    try:
        await kit.store.create_block(
            "ada", "now", "current", kind=WORKING, permission=Permission.ADMIN
        )
        await kit.store.create_block(
            "ada", "later", "next", kind=ARCHIVAL, permission=Permission.HUMAN
        )
        error = await kit.error("context", _swap(archive_target="kept"))
        blocks = await _blocks(kit)
    finally:
        await kit.store.close()

    assert error.kind == "denied"
    assert "archive step is done" in error.message
    assert error.details["archived"] == "kept"
    assert [r.label for r in consent.asked] == ["later"]
    assert sorted(blocks) == ["kept", "later"]  # the text is kept, under the target
    assert (blocks["kept"].value, blocks["later"].kind) == ("current", ARCHIVAL)
