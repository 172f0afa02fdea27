"""The ``recall`` tool: archival insert, append, read and delete."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from satchel.builtin import memory_toolset
from satchel.memory import BlockKind, Permission, SQLiteStore
from satchel.tools import ToolContext

from .conftest import Kit

pytestmark = pytest.mark.anyio


async def test_insert_without_a_label_names_the_entry_by_its_timestamp(kit: Kit) -> None:
    out = await kit.ok("recall", {"operation": "insert", "content": "Sam's cat is Miso."})

    label = out["entry"]["label"]
    assert re.fullmatch(r"archival_\d{8}T\d{6}Z(_\d+)?", label)
    block = await kit.store.get_block("ada", label)
    assert (block.kind, block.value) == (BlockKind.ARCHIVAL, "Sam's cat is Miso.")


async def test_inserts_in_the_same_second_get_distinct_labels(kit: Kit) -> None:
    labels = [
        (await kit.ok("recall", {"operation": "insert", "content": f"fact {i}"}))["entry"]["label"]
        for i in range(3)
    ]

    assert len(set(labels)) == 3


async def test_insert_with_a_label_and_tags_keeps_both(kit: Kit) -> None:
    await kit.ok(
        "recall",
        {
            "operation": "insert",
            "content": "Paris trip",
            "label": "trip",
            "tags": ["travel", "2026"],
        },
    )

    block = await kit.store.get_block("ada", "trip")
    assert block.tags == ("travel", "2026")
    assert block.kind is BlockKind.ARCHIVAL


async def test_insert_under_a_taken_label_suggests_what_to_do(kit: Kit) -> None:
    await kit.store.create_block("ada", "trip", "x", kind=BlockKind.ARCHIVAL)

    error = await kit.error("recall", {"operation": "insert", "content": "y", "label": "trip"})

    assert error.kind == "retry"
    assert "append" in error.message
    assert (await kit.store.get_block("ada", "trip")).value == "x"


async def test_append_extends_an_archival_entry(kit: Kit) -> None:
    await kit.store.create_block("ada", "trip", "Day 1: Louvre.", kind=BlockKind.ARCHIVAL)

    await kit.ok("recall", {"operation": "append", "label": "trip", "content": "Day 2: Orsay."})

    assert (await kit.store.get_block("ada", "trip")).value == "Day 1: Louvre.\nDay 2: Orsay."


async def test_append_to_a_core_block_points_to_the_context_tool(kit: Kit) -> None:
    await kit.store.create_block("ada", "persona", "I am Ada.")

    error = await kit.error("recall", {"operation": "append", "label": "persona", "content": "x"})

    assert error.kind == "retry"
    assert "context tool" in error.message
    assert (await kit.store.get_block("ada", "persona")).value == "I am Ada."


async def test_read_returns_the_full_text_and_metadata(kit: Kit) -> None:
    text = "A long note. " * 50
    await kit.store.create_block("ada", "note", text, kind=BlockKind.ARCHIVAL, tags=["x"])

    out = await kit.ok("recall", {"operation": "read", "label": "note"})

    assert out["entry"]["value"] == text
    assert out["entry"]["tags"] == ["x"]
    assert out["entry"]["chars"] == len(text)


async def test_read_of_an_unknown_label_fails_naming_it(kit: Kit) -> None:
    error = await kit.error("recall", {"operation": "read", "label": "ghost"})

    assert error.kind == "failed"
    assert "'ghost'" in error.message


async def test_delete_removes_an_entry_the_agent_stored(kit: Kit) -> None:
    out = await kit.ok("recall", {"operation": "insert", "content": "temp", "label": "temp"})
    assert out["entry"]["permission"] == "admin"

    deleted = await kit.ok("recall", {"operation": "delete", "label": "temp"})

    assert deleted["entry"]["value"] == "temp"
    assert (await kit.error("recall", {"operation": "read", "label": "temp"})).kind == "failed"


async def test_delete_is_denied_below_admin_permission(kit: Kit) -> None:
    await kit.store.create_block(
        "ada", "kept", "x", kind=BlockKind.ARCHIVAL, permission=Permission.READ_WRITE
    )

    error = await kit.error("recall", {"operation": "delete", "label": "kept"})

    assert error.kind == "denied"
    assert (await kit.store.get_block("ada", "kept")).value == "x"


async def test_delete_never_touches_a_block_in_context(kit: Kit) -> None:
    await kit.store.create_block("ada", "persona", "I am Ada.", permission=Permission.ADMIN)

    error = await kit.error("recall", {"operation": "delete", "label": "persona"})

    assert error.kind == "retry"
    assert (await kit.store.get_block("ada", "persona")).value == "I am Ada."


async def test_a_toolset_can_make_archival_entries_undeletable(tmp_path: Path) -> None:
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as store:
        tools = memory_toolset(store, archival_permission=Permission.READ_WRITE)
        ctx = ToolContext(agent="ada")
        await tools.call("recall", {"operation": "insert", "content": "x", "label": "k"}, ctx)

        result = await tools.call("recall", {"operation": "delete", "label": "k"}, ctx)

        assert result.error is not None
        assert result.error.kind == "denied"


async def test_an_empty_tag_is_a_retry(kit: Kit) -> None:
    error = await kit.error("recall", {"operation": "insert", "content": "x", "tags": [""]})

    assert error.kind == "retry"
    assert "tags" in error.message


async def test_a_project_reads_the_person_s_archival_entries_and_nothing_else(
    tmp_path: Path,
) -> None:
    person, app, other = "default", "project:github.com:acme:app", "project:github.com:acme:x"
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as store:
        await store.create_block(person, "dentist", "Dr Lee.", kind=BlockKind.ARCHIVAL)
        await store.create_block(person, "diary", "Private core block.")
        await store.create_block(other, "secret", "Other project.", kind=BlockKind.ARCHIVAL)
        await store.share_block(other, "secret", person, Permission.READ_ONLY)
        tools = memory_toolset(store, global_agent=person)
        alone = memory_toolset(store)
        ctx = ToolContext(agent=app)

        async def read(label: str, registry: object = tools) -> dict[str, object] | str:
            result = await registry.call(  # type: ignore[attr-defined]
                "recall", {"operation": "read", "label": label}, ctx
            )
            return result.error.kind if result.error is not None else result.structured()["entry"]

        found = await tools.call("search", {"query": "Lee", "domain": "archival_memory"}, ctx)
        out = found.structured()
        assert out is not None
        [hit] = out["results"]
        by_search = await read(hit["label"])
        assert isinstance(by_search, dict)
        assert (hit["label"], by_search["value"], by_search["permission"]) == (
            "default/dentist",
            "Dr Lee.",
            "read_only",
        )
        assert await read("dentist") == by_search  # a bare label the project lacks
        assert await read("diary") == "failed"  # not archival: not the person's to lend
        assert await read("default/diary") == "failed"
        assert await read(f"{other}/secret") == "failed"  # another project's, by any name
        assert await read("secret") == "failed"  # shared with the person, not theirs
        assert await read("default/dentist", alone) == "failed"  # no person: no fallback
        await store.create_block(app, "dentist", "The app's own.", kind=BlockKind.ARCHIVAL)
        own = await read("dentist")
        assert isinstance(own, dict)
        assert own["value"] == "The app's own."  # the project's own label wins


async def test_read_opens_an_entry_by_the_id_search_shows(kit: Kit) -> None:
    await kit.ok("recall", {"operation": "insert", "content": "Dr Lee, Tuesdays.", "label": "gp"})
    found = await kit.ok("search", {"query": "Lee", "domain": "archival_memory"})
    [hit] = found["results"]

    by_id = await kit.ok("recall", {"operation": "read", "label": hit["id"]})
    as_id_field = await kit.ok("recall", {"operation": "read", "id": hit["id"]})

    assert by_id == as_id_field
    assert (by_id["entry"]["label"], by_id["entry"]["value"]) == ("gp", "Dr Lee, Tuesdays.")
    assert by_id == await kit.ok("recall", {"operation": "read", "label": "gp"})


async def test_a_label_that_equals_another_entry_s_id_names_the_labelled_entry(
    kit: Kit,
) -> None:
    first = await kit.store.create_block("ada", "first", "by id", kind=BlockKind.ARCHIVAL)
    await kit.store.create_block("ada", first.id, "by label", kind=BlockKind.ARCHIVAL)

    out = await kit.ok("recall", {"operation": "read", "label": first.id})

    assert out["entry"]["value"] == "by label"


async def test_read_of_an_unknown_name_says_label_and_id_were_both_tried(kit: Kit) -> None:
    error = await kit.error("recall", {"operation": "read", "label": "0" * 32})

    assert error.kind == "failed"
    assert "\n" not in error.message
    assert "labelled '00000000000000000000000000000000'" in error.message
    assert "none has that id" in error.message


async def test_read_by_id_never_opens_another_agent_s_entry(kit: Kit) -> None:
    secret = await kit.store.create_block("bob", "diary", "Bob's.", kind=BlockKind.ARCHIVAL)

    error = await kit.error("recall", {"operation": "read", "label": secret.id})

    assert error.kind == "failed"
    assert "Bob's." not in error.message


async def test_read_with_both_label_and_id_is_invalid(kit: Kit) -> None:
    error = await kit.error("recall", {"operation": "read", "label": "a", "id": "b"})

    assert error.kind == "invalid_arguments"


async def test_an_ambiguous_label_is_not_read_as_an_id(kit: Kit) -> None:
    for owner in ("bob", "cy"):
        await kit.store.create_block(owner, "plan", owner, kind=BlockKind.ARCHIVAL)
        await kit.store.share_block(owner, "plan", "ada", Permission.READ_ONLY)

    error = await kit.error("recall", {"operation": "read", "label": "plan"})

    assert error.kind == "failed"
    assert "bob/plan" in error.message
    assert "cy/plan" in error.message


async def test_a_project_reads_the_person_s_entries_by_id_exactly_as_by_label(
    tmp_path: Path,
) -> None:
    person, app, other = "default", "project:github.com:acme:app", "project:github.com:acme:x"
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as store:
        dentist = await store.create_block(person, "dentist", "Dr Lee.", kind=BlockKind.ARCHIVAL)
        diary = await store.create_block(person, "diary", "Private core block.")
        secret = await store.create_block(other, "secret", "Other.", kind=BlockKind.ARCHIVAL)
        await store.share_block(other, "secret", person, Permission.READ_ONLY)
        tools = memory_toolset(store, global_agent=person)
        ctx = ToolContext(agent=app)

        async def read(name: str) -> dict[str, object] | str:
            result = await tools.call("recall", {"operation": "read", "label": name}, ctx)
            return result.error.kind if result.error is not None else result.structured()["entry"]

        assert await read(dentist.id) == await read("default/dentist")
        by_id = await read(dentist.id)
        assert isinstance(by_id, dict)
        assert (by_id["label"], by_id["permission"]) == ("default/dentist", "read_only")
        assert await read(diary.id) == "failed"  # not archival: closed by label too
        assert await read(secret.id) == "failed"  # shared with the person, not theirs
    assert (await _value(tmp_path, person, "dentist")) == "Dr Lee."


async def _value(tmp_path: Path, agent: str, label: str) -> str:
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as store:
        return (await store.get_block(agent, label)).value


@pytest.mark.parametrize("name", ["x" * 300, "tab\there", "a/b/c", "default/"])
async def test_a_name_that_cannot_be_an_id_is_simply_not_found(kit: Kit, name: str) -> None:
    error = await kit.error("recall", {"operation": "read", "label": name})

    assert error.kind == "failed"
    assert "none has that id" in error.message
    assert "\n" not in error.message


async def test_append_and_delete_take_the_entry_s_id_too(kit: Kit) -> None:
    entry = await kit.store.create_block(
        "ada", "log", "start", kind=BlockKind.ARCHIVAL, permission=Permission.ADMIN
    )

    appended = await kit.ok("recall", {"operation": "append", "id": entry.id, "content": "next"})
    deleted = await kit.ok("recall", {"operation": "delete", "label": entry.id})

    assert appended["entry"]["label"] == "log"
    assert deleted["entry"]["value"] == "start\nnext"
    assert await kit.store.list_blocks("ada") == []


async def test_a_core_block_s_id_is_refused_by_recall_writes_with_its_label(kit: Kit) -> None:
    human = await kit.store.create_block("ada", "human", "Sam.", permission=Permission.ADMIN)

    error = await kit.error("recall", {"operation": "delete", "label": human.id})

    assert error.kind == "retry"
    assert "'human' is in core memory" in error.message
    assert (await kit.store.get_block("ada", "human")).value == "Sam."


async def test_a_project_is_told_the_person_s_entry_is_read_only_by_label_and_by_id(
    tmp_path: Path,
) -> None:
    person, app = "default", "project:github.com:acme:app"
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as store:
        dentist = await store.create_block(
            person, "dentist", "Dr Lee.", kind=BlockKind.ARCHIVAL, permission=Permission.ADMIN
        )
        tools = memory_toolset(store, global_agent=person)
        ctx = ToolContext(agent=app)
        for name, args in [
            ("default/dentist", {"operation": "append", "content": "Moved."}),
            ("dentist", {"operation": "delete"}),
        ]:
            result = await tools.call("recall", {**args, "label": name}, ctx)
            assert result.error is not None
            assert result.error.kind == "denied"
            assert "context load" in result.error.message
        by_id = await tools.call("recall", {"operation": "delete", "label": dentist.id}, ctx)
        assert by_id.error is not None
        assert by_id.error.kind == "denied"
        assert "'default/dentist' is default's archival entry" in by_id.error.message
        assert (await store.get_block(person, "dentist")).value == "Dr Lee."


async def test_a_message_s_id_is_not_an_entry_and_the_error_says_where_its_text_is(
    kit: Kit,
) -> None:
    message = await kit.store.add_message("ada", "user", "My cat is called Miso.")

    error = await kit.error("recall", {"operation": "read", "label": message.id})

    assert error.kind == "failed"
    assert "search result holds its full text" in error.message
