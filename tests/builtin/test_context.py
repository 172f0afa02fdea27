"""The ``context`` tool: every operation, and the errors a model meets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from satchel.memory import BlockKind, Permission

from .conftest import Consent, Kit, make_kit

pytestmark = pytest.mark.anyio


async def test_set_creates_a_working_block_and_reports_no_previous_value(kit: Kit) -> None:
    out = await kit.ok(
        "context",
        {"operation": "set", "label": "human", "value": "Name: Sam", "description": "the user"},
    )

    assert out["previous_value"] is None
    assert out["block"]["kind"] == "working"
    block = await kit.store.get_block("ada", "human")
    assert (block.value, block.description) == ("Name: Sam", "the user")


async def test_set_overwrites_and_returns_the_previous_value(kit: Kit) -> None:
    await kit.store.create_block("ada", "human", "Name: Sam", description="the user")

    out = await kit.ok("context", {"operation": "set", "label": "human", "value": "Name: Sam Lee"})

    assert out["previous_value"] == "Name: Sam"
    block = await kit.store.get_block("ada", "human")
    assert block.value == "Name: Sam Lee"
    assert block.description == "the user"  # kept when not given
    assert "it had 9" in out["message"]


async def test_create_makes_a_working_block(kit: Kit) -> None:
    out = await kit.ok(
        "context",
        {"operation": "create", "label": "plan", "value": "1. read", "description": "steps"},
    )

    assert out["block"]["kind"] == "working"
    assert "Created the working block 'plan'" in out["message"]
    block = await kit.store.get_block("ada", "plan")
    assert (block.value, block.description) == ("1. read", "steps")


async def test_create_on_a_taken_label_is_a_retry_and_keeps_the_block(kit: Kit) -> None:
    await kit.store.create_block("ada", "human", "Name: Sam")

    error = await kit.error("context", {"operation": "create", "label": "human", "value": "x"})

    assert error.kind == "retry"
    assert "already exists" in error.message
    assert "set to overwrite" in error.message
    assert (await kit.store.get_block("ada", "human")).value == "Name: Sam"


async def test_behind_an_approval_gate_set_on_a_read_write_block_runs_at_once(
    kit: Kit, tmp_path: Path
) -> None:
    from satchel.consent import PermissionBroker, SQLiteApprovalStore, with_approval
    from satchel.tools import ToolContext

    async with PermissionBroker(SQLiteApprovalStore(tmp_path / "approvals.db")) as broker:
        gated = with_approval(kit.tools, broker)
        context = ToolContext(agent="ada", origin="test")
        created = await gated.call(
            "context", {"operation": "create", "label": "plan", "value": "1. read"}, context
        )
        overwrite = await gated.call(
            "context", {"operation": "set", "label": "plan", "value": "gone"}, context
        )
        pending = await broker.pending()

    assert created.ok, created.to_text()
    assert overwrite.ok, overwrite.to_text()  # the block's permission decides, not the gate
    assert pending == []
    assert (await kit.store.get_block("ada", "plan")).value == "gone"
    spec = kit.tools.get("context").spec  # type: ignore[union-attr]
    assert spec.memory_gated
    assert spec.is_destructive({"operation": "set"})  # the hint still reaches clients


async def test_append_adds_a_line_at_the_end(kit: Kit) -> None:
    await kit.store.create_block("ada", "human", "Name: Sam")

    out = await kit.ok(
        "context", {"operation": "append", "label": "human", "content": "Likes tea."}
    )

    assert (await kit.store.get_block("ada", "human")).value == "Name: Sam\nLikes tea."
    assert out["block"]["chars"] == len("Name: Sam\nLikes tea.")


async def test_replace_swaps_the_one_matching_passage(kit: Kit) -> None:
    await kit.store.create_block("ada", "human", "Likes tea. Lives in Oslo.")

    await kit.ok(
        "context", {"operation": "replace", "label": "human", "old": "tea", "new": "coffee"}
    )

    assert (await kit.store.get_block("ada", "human")).value == "Likes coffee. Lives in Oslo."


async def test_replace_with_no_match_says_it_matched_zero_times(kit: Kit) -> None:
    await kit.store.create_block("ada", "human", "Likes tea.")

    error = await kit.error(
        "context", {"operation": "replace", "label": "human", "old": "coffee", "new": "x"}
    )

    assert error.kind == "retry"
    assert "does not occur" in error.message
    assert error.details["matches"] == 0
    assert (await kit.store.get_block("ada", "human")).value == "Likes tea."


async def test_replace_matching_twice_says_how_many_times(kit: Kit) -> None:
    await kit.store.create_block("ada", "human", "tea at noon, tea at five")

    error = await kit.error(
        "context", {"operation": "replace", "label": "human", "old": "tea", "new": "x"}
    )

    assert error.kind == "retry"
    assert "occurs 2 times" in error.message
    assert error.details["matches"] == 2
    assert (await kit.store.get_block("ada", "human")).value == "tea at noon, tea at five"


async def test_an_unknown_label_is_a_failed_result_naming_the_label(kit: Kit) -> None:
    for args in (
        {"operation": "append", "label": "nope", "content": "x"},
        {"operation": "replace", "label": "nope", "old": "a", "new": "b"},
        {"operation": "archive", "label": "nope"},
        {"operation": "load", "label": "nope"},
    ):
        error = await kit.error("context", args)
        assert error.kind == "failed"
        assert "'nope'" in error.message


async def test_a_write_past_the_char_limit_gives_the_numbers_and_a_hint(kit: Kit) -> None:
    await kit.store.create_block("ada", "human", "0123456789", char_limit=15)

    error = await kit.error(
        "context", {"operation": "append", "label": "human", "content": "abcdefghij"}
    )

    assert error.kind == "failed"
    assert "21" in error.message
    assert "15" in error.message
    assert "ummarise" in error.message
    assert "archive" in error.message
    assert error.details["char_limit"] == 15
    assert (await kit.store.get_block("ada", "human")).value == "0123456789"


async def test_set_past_the_char_limit_is_refused_and_keeps_the_value(kit: Kit) -> None:
    await kit.store.create_block("ada", "human", "short", char_limit=10)

    error = await kit.error("context", {"operation": "set", "label": "human", "value": "x" * 11})

    assert "11" in error.message
    assert "10" in error.message
    assert (await kit.store.get_block("ada", "human")).value == "short"


async def test_a_read_only_block_denies_append_replace_and_set(kit: Kit) -> None:
    await kit.store.create_block("ada", "rules", "Be kind.", permission=Permission.READ_ONLY)

    for args in (
        {"operation": "append", "label": "rules", "content": "x"},
        {"operation": "replace", "label": "rules", "old": "kind", "new": "mean"},
        {"operation": "set", "label": "rules", "value": "x"},
        {"operation": "archive", "label": "rules"},
    ):
        error = await kit.error("context", args)
        assert error.kind == "denied", args
    assert (await kit.store.get_block("ada", "rules")).value == "Be kind."


async def test_a_block_an_operator_made_read_only_denies_the_context_tool(kit: Kit) -> None:
    await kit.store.create_block("ada", "rules", "x")
    await kit.ok("context", {"operation": "append", "label": "rules", "content": "y"})
    await kit.store.configure_block("ada", "rules", permission=Permission.READ_ONLY)

    error = await kit.error("context", {"operation": "append", "label": "rules", "content": "z"})

    assert error.kind == "denied"
    assert (await kit.store.get_block("ada", "rules")).value == "x\ny"


async def test_an_append_level_block_takes_appends_but_denies_overwrites(kit: Kit) -> None:
    await kit.store.create_block("ada", "log", "start", permission=Permission.APPEND)

    await kit.ok("context", {"operation": "append", "label": "log", "content": "next"})
    error = await kit.error("context", {"operation": "set", "label": "log", "value": "x"})

    assert error.kind == "denied"
    assert (await kit.store.get_block("ada", "log")).value == "start\nnext"


async def test_a_human_level_block_without_a_consent_handler_needs_approval(kit: Kit) -> None:
    await kit.store.create_block("ada", "human", "Sam", permission=Permission.HUMAN)

    error = await kit.error("context", {"operation": "append", "label": "human", "content": "x"})

    assert error.kind == "needs_approval"
    assert "consent" in error.message


async def test_consent_given_lets_the_write_through_and_consent_refused_denies_it(
    tmp_path: Path,
) -> None:
    for answer, expected in ((True, "Sam\nLikes tea."), (False, "Sam")):
        consent = Consent(answer)
        kit = await make_kit(tmp_path / f"{answer}.db", consent=consent)
        try:
            await kit.store.create_block("ada", "human", "Sam", permission=Permission.HUMAN)
            result = await kit.call(
                "context", {"operation": "append", "label": "human", "content": "Likes tea."}
            )
            assert result.ok is answer
            if not answer:
                assert result.error is not None
                assert result.error.kind == "denied"
            assert [r.label for r in consent.asked] == ["human"]
            assert consent.asked[0].operation == "append"
            assert (await kit.store.get_block("ada", "human")).value == expected
        finally:
            await kit.store.close()


async def test_archive_then_load_moves_a_block_out_of_and_back_into_context(kit: Kit) -> None:
    await kit.store.create_block("ada", "project", "Build a boat.")

    out = await kit.ok("context", {"operation": "archive", "label": "project"})
    assert out["block"]["kind"] == "archival"
    assert (await kit.store.get_block("ada", "project")).kind is BlockKind.ARCHIVAL

    out = await kit.ok("context", {"operation": "load", "label": "project"})
    assert out["block"]["kind"] == "working"
    assert (await kit.store.get_block("ada", "project")).kind is BlockKind.WORKING


async def test_archiving_an_archived_block_or_loading_a_loaded_one_explains_why_not(
    kit: Kit,
) -> None:
    await kit.store.create_block("ada", "old", "x", kind=BlockKind.ARCHIVAL)
    await kit.store.create_block("ada", "persona", "y")

    archive = await kit.error("context", {"operation": "archive", "label": "old"})
    load = await kit.error("context", {"operation": "load", "label": "persona"})

    assert archive.kind == "retry"
    assert "already in archival" in archive.message
    assert load.kind == "retry"
    assert "already in context" in load.message


async def test_swap_archives_one_block_and_loads_another(kit: Kit) -> None:
    await kit.store.create_block("ada", "now", "current task", kind=BlockKind.WORKING)
    await kit.store.create_block("ada", "later", "next task", kind=BlockKind.ARCHIVAL)

    out = await kit.ok(
        "context", {"operation": "swap", "archive_label": "now", "load_label": "later"}
    )

    assert [b["label"] for b in out["blocks"]] == ["now", "later"]
    assert (await kit.store.get_block("ada", "now")).kind is BlockKind.ARCHIVAL
    assert (await kit.store.get_block("ada", "later")).kind is BlockKind.WORKING


async def test_a_swap_that_cannot_load_changes_nothing(kit: Kit) -> None:
    await kit.store.create_block("ada", "now", "current task", kind=BlockKind.WORKING)
    await kit.store.create_block(
        "ada", "locked", "x", kind=BlockKind.ARCHIVAL, permission=Permission.READ_ONLY
    )

    error = await kit.error(
        "context", {"operation": "swap", "archive_label": "now", "load_label": "locked"}
    )

    assert error.kind == "denied"
    assert (await kit.store.get_block("ada", "now")).kind is BlockKind.WORKING
    assert (await kit.store.get_block("ada", "locked")).kind is BlockKind.ARCHIVAL


async def test_list_gives_sizes_limits_and_values_of_core_and_working_blocks_only(
    kit: Kit,
) -> None:
    await kit.store.create_block("ada", "persona", "I am Ada.", char_limit=2000)
    await kit.store.create_block("ada", "task", "Write docs.", kind=BlockKind.WORKING)
    await kit.store.create_block("ada", "diary", "secret", kind=BlockKind.ARCHIVAL)

    out = await kit.ok("context", {"operation": "list"})

    rows = {b["label"]: b for b in out["blocks"]}
    assert list(rows) == ["persona", "task"]
    assert rows["persona"]["chars"] == 9
    assert rows["persona"]["char_limit"] == 2000
    assert rows["persona"]["value"] == "I am Ada."
    assert rows["task"]["kind"] == "working"
    assert out["message"] == "2 blocks in context."


async def test_list_of_an_empty_memory_says_how_to_start(kit: Kit) -> None:
    out = await kit.ok("context", {"operation": "list"})

    assert out["blocks"] == []
    assert "create operation" in out["message"]


async def test_a_block_shared_by_another_agent_is_listed_with_its_owner(kit: Kit) -> None:
    await kit.store.create_block("bob", "team", "We ship on Fridays.")
    await kit.store.share_block("bob", "team", "ada", Permission.APPEND)

    out = await kit.ok("context", {"operation": "list"})
    await kit.ok("context", {"operation": "append", "label": "team", "content": "Ada agrees."})

    (row,) = out["blocks"]
    assert row["shared_from"] == "bob"
    assert row["label"] == "bob/team"
    assert row["permission"] == "append"
    assert (await kit.store.get_block("bob", "team")).value.endswith("Ada agrees.")


async def test_an_invalid_label_is_a_retry_not_an_internal_error(kit: Kit) -> None:
    error = await kit.error("context", {"operation": "set", "label": " padded ", "value": "x"})

    assert error.kind == "retry"
    assert "label" in error.message


async def test_each_agent_sees_only_its_own_blocks(kit: Kit) -> None:
    await kit.ok("context", {"operation": "set", "label": "persona", "value": "I am Ada."})

    error = await kit.error(
        "context", {"operation": "append", "label": "persona", "content": "x"}, agent="bob"
    )
    out = await kit.ok("context", {"operation": "list"}, agent="bob")

    assert error.kind == "failed"
    assert out["blocks"] == []


@pytest.mark.parametrize(
    "args",
    [
        {"operation": "append", "label": "human", "content": "Likes green tea."},
        {"operation": "replace", "label": "human", "old": "Ada", "new": "Ada L."},
        {"operation": "set", "label": "human", "value": "Name: Ada."},
    ],
)
async def test_a_write_result_is_short_and_never_repeats_the_description(
    kit: Kit, args: dict[str, Any]
) -> None:
    description = "What you know about the person. " * 24  # 768 characters
    await kit.store.create_block("ada", "human", "Name: Ada", description=description)

    out = await kit.ok("context", args)

    text = json.dumps(out)
    assert "What you know" not in text
    assert len(text) < 400 + len(out.get("previous_value") or "")
    block = out["block"]
    assert set(block) == {
        "label",
        "kind",
        "chars",
        "char_limit",
        "permission",
        "version",
        "shared_from",
    }
    assert block["version"] == 2
    assert f"version {block['version']}" in out["message"]
    assert str(block["chars"]) in out["message"]


async def test_recall_insert_and_append_results_are_short_and_read_is_whole(kit: Kit) -> None:
    stored = await kit.ok("recall", {"operation": "insert", "content": "Dr Lee.", "label": "dr"})
    added = await kit.ok("recall", {"operation": "append", "label": "dr", "content": "Tue."})
    read = await kit.ok("recall", {"operation": "read", "label": "dr"})

    assert "description" not in stored["entry"]
    assert (added["entry"]["version"], added["entry"]["chars"]) == (2, len("Dr Lee.\nTue."))
    assert "version 2" in added["message"]
    assert read["entry"]["value"] == "Dr Lee.\nTue."
    assert "description" in read["entry"]
