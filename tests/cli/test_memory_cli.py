"""``satchel memory``: the memory commands on a real SQLite file, through typer's
CliRunner."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner, Result

from satchel.cli import app
from satchel.memory import BlockKind, MemoryStore, Permission, SQLiteStore

runner = CliRunner()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


def run(db: Path | None, *args: str, stdin: str | None = None) -> Result:
    # These tests start agents with no blocks; tests/cli/test_agents_cli.py covers the
    # default persona and human blocks.
    env = {"COLUMNS": "200", "SATCHEL_TEMPLATE": "none"}
    if db is not None:
        env["SATCHEL_DB"] = str(db)
    return runner.invoke(app, ["memory", *args], input=stdin, env=env, catch_exceptions=False)


def ok(db: Path | None, *args: str, stdin: str | None = None) -> Result:
    result = run(db, *args, stdin=stdin)
    assert result.exit_code == 0, result.output
    return result


def one_error_line(result: Result, code: int, *words: str) -> str:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.output
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def seed(db: Path, work: Callable[[MemoryStore], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with SQLiteStore(db, embedder=None) as store:
            return await work(store)

    return anyio.run(main)


# --- blocks, show, set, append, archive ---------------------------------------------------


def test_set_creates_a_core_block_that_blocks_and_show_display(db: Path) -> None:
    ok(db, "set", "persona", "I am Ada.", "--description", "who I am", "--char-limit", "100")

    table = ok(db, "blocks").stdout
    shown = ok(db, "show", "persona").stdout

    assert "persona" in table
    assert "9/100" in table
    assert "who I am" in table
    assert "core" in table
    assert "I am Ada." in shown
    assert "version 1" in shown


def test_json_output_gives_every_block_field(db: Path) -> None:
    ok(db, "set", "persona", "I am Ada.")

    listed = json.loads(ok(db, "blocks", "--json").stdout)["blocks"]
    shown = json.loads(ok(db, "show", "persona", "--json").stdout)

    assert [b["label"] for b in listed] == ["persona"]
    assert shown["value"] == "I am Ada."
    assert shown["kind"] == "core"
    assert shown["version"] == 1
    assert set(shown) >= {"id", "created_at", "updated_at", "shares", "permission"}


def test_set_overwrites_an_existing_block_and_reads_stdin_for_a_dash(db: Path) -> None:
    ok(db, "set", "notes", "first")

    out = ok(db, "set", "notes", "-", stdin="second\nline").stdout

    assert "5 → 11 chars" in out
    assert seed(db, lambda s: s.get_block("default", "notes")).value == "second\nline"


def test_append_adds_a_line_and_a_char_limit_refusal_is_one_line(db: Path) -> None:
    ok(db, "set", "log", "start", "--char-limit", "12")
    ok(db, "append", "log", "next")

    result = run(db, "append", "log", "far too long")

    line = one_error_line(result, 2, "12")
    assert "archive" in line
    assert seed(db, lambda s: s.get_block("default", "log")).value == "start\nnext"


def test_archive_and_load_move_a_block_between_kinds(db: Path) -> None:
    ok(db, "set", "task", "Fix the roof.")

    ok(db, "archive", "task")
    archived = json.loads(ok(db, "blocks", "--kind", "archival", "--json").stdout)["blocks"]
    ok(db, "load", "task")
    working = json.loads(ok(db, "blocks", "--kind", "working", "--json").stdout)["blocks"]

    assert [b["label"] for b in archived] == ["task"]
    assert [b["label"] for b in working] == ["task"]


def test_agents_have_separate_memories(db: Path) -> None:
    ok(db, "set", "persona", "I am Ada.", "--agent", "ada")
    ok(db, "set", "persona", "I am Bob.", "--agent", "bob")

    assert "I am Bob." in ok(db, "show", "persona", "--agent", "bob").stdout
    assert json.loads(ok(db, "blocks", "--json").stdout)["blocks"] == []


def test_a_write_needing_consent_says_to_pass_yes_and_yes_gives_it(db: Path) -> None:
    seed(db, lambda s: s.create_block("default", "human", "Sam", permission=Permission.HUMAN))

    refused = run(db, "append", "human", "Likes tea.")
    one_error_line(refused, 2, "consent", "--yes")
    ok(db, "append", "human", "Likes tea.", "--yes")

    assert seed(db, lambda s: s.get_block("default", "human")).value == "Sam\nLikes tea."


def test_a_read_only_block_is_refused_even_with_yes(db: Path) -> None:
    seed(db, lambda s: s.create_block("default", "rules", "x", permission=Permission.READ_ONLY))

    one_error_line(run(db, "set", "rules", "y", "--yes"), 2, "not allowed")


def test_configure_makes_a_block_read_only_keeping_its_text_and_version_history(
    db: Path,
) -> None:
    ok(db, "set", "rules", "Be kind.", "--char-limit", "10")

    out = ok(
        db, "configure", "rules", "--permission", "read_only", "--no-limit", "-d", "house rules"
    ).stdout

    assert "read_only" in out
    assert "no limit" in out
    assert "version 2" in out
    block = seed(db, lambda s: s.get_block("default", "rules"))
    assert (block.value, block.permission, block.char_limit, block.description) == (
        "Be kind.",
        Permission.READ_ONLY,
        None,
        "house rules",
    )
    one_error_line(run(db, "append", "rules", "Be brief.", "--yes"), 2, "not allowed")


def test_configure_raises_a_limit_so_a_longer_append_fits(db: Path) -> None:
    ok(db, "set", "log", "start", "--char-limit", "8")
    one_error_line(run(db, "append", "log", "next"), 2, "8")

    shown = json.loads(ok(db, "configure", "log", "--limit", "20", "--json").stdout)
    ok(db, "append", "log", "next")

    assert shown["char_limit"] == 20
    assert shown["version"] == 2
    assert seed(db, lambda s: s.get_block("default", "log")).value == "start\nnext"


def test_configure_refuses_a_limit_below_the_current_length_in_one_line(db: Path) -> None:
    ok(db, "set", "notes", "0123456789", "--char-limit", "20")

    one_error_line(run(db, "configure", "notes", "--limit", "4"), 2, "10", "4")

    block = seed(db, lambda s: s.get_block("default", "notes"))
    assert (block.char_limit, block.version) == (20, 1)


def test_configure_is_only_for_the_owner(db: Path) -> None:
    async def share(store: MemoryStore) -> None:
        await store.create_block("ada", "plan", "the plan")
        await store.share_block("ada", "plan", "bob", Permission.READ_WRITE)

    seed(db, share)

    one_error_line(run(db, "configure", "plan", "--no-limit", "--agent", "bob"), 2, "owner")
    one_error_line(run(db, "configure", "nope", "--no-limit", "--agent", "ada"), 2, "'nope'")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("configure", "persona"), ("nothing to change",)),
        (("configure", "persona", "--limit", "5", "--no-limit"), ("--limit", "--no-limit")),
        (("configure", "persona", "--limit", "-1"), ("--limit",)),
        (("configure", "persona", "--permission", "root"), ("--permission",)),
    ],
)
def test_configure_with_bad_input_prints_one_line_and_exits_2(
    db: Path, args: tuple[str, ...], words: tuple[str, ...]
) -> None:
    ok(db, "set", "persona", "x")

    one_error_line(run(db, *args), 2, *words)
    assert seed(db, lambda s: s.get_block("default", "persona")).version == 1


# --- errors -------------------------------------------------------------------------------


def test_reading_a_database_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"

    one_error_line(run(missing, "blocks"), 2, "--db", "typo.db")
    assert not missing.exists()


def test_the_db_option_overrides_the_environment(tmp_path: Path) -> None:
    other = tmp_path / "other.db"

    ok(tmp_path / "env.db", "set", "x", "1", "--db", str(other))

    assert other.exists()
    assert not (tmp_path / "env.db").exists()


def test_an_unknown_label_exits_1_with_one_line(db: Path) -> None:
    ok(db, "set", "persona", "x")

    one_error_line(run(db, "show", "nope"), 2, "'nope'")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("set", " padded", "x"), ("label",)),
        (("search", "x", "--since", "the blue moon"), ("--since",)),
        (("search", "x", "--since", "2026-02-01", "--until", "2026-01-01"), ("--since",)),
        (("search", "x", "--role", "robot"), ("--role",)),
        (("search", "x", "--limit", "0"), ("--limit",)),
        (("blocks", "--kind", "attic"), ("--kind",)),
        (("set", "x", "y", "--permission", "root"), ("--permission",)),
    ],
)
def test_a_bad_argument_prints_one_line_and_exits_2(
    db: Path, args: tuple[str, ...], words: tuple[str, ...]
) -> None:
    ok(db, "set", "persona", "x")

    one_error_line(run(db, *args), 2, *words)


# --- search -------------------------------------------------------------------------------


def test_search_finds_archival_entries_and_messages(db: Path) -> None:
    async def fill(store: MemoryStore) -> None:
        await store.create_block(
            "default", "pets", "Sam has a grey cat called Miso.", kind=BlockKind.ARCHIVAL
        )
        await store.add_message("default", "user", "My cat Miso loves tuna.")

    seed(db, fill)
    ok(db, "reembed")

    table = ok(db, "search", "cat").stdout
    hits = json.loads(ok(db, "search", "cat", "--json", "--domain", "archival_memory").stdout)
    users = json.loads(ok(db, "search", "cat", "--json", "--role", "user").stdout)

    assert "pets" in table
    assert "Miso" in table
    assert [h["label"] for h in hits] == ["pets"]
    assert hits[0]["text"] == "Sam has a grey cat called Miso."
    assert [h["text"] for h in users] == ["My cat Miso loves tuna."]


def test_search_leaves_tool_traffic_out_unless_asked_and_marks_unrelated_hits(db: Path) -> None:
    async def fill(store: MemoryStore) -> None:
        await store.add_message("default", "user", "My cat Miso loves tuna.")
        await store.add_message("default", "tool", '{"cat": "Miso", "food": "tuna"}')

    seed(db, fill)
    ok(db, "reembed")

    plain = json.loads(ok(db, "search", "Miso tuna", "--json").stdout)
    traffic = json.loads(ok(db, "search", "Miso tuna", "--json", "--tool-traffic").stdout)
    unrelated = ok(db, "search", "quarterly tax filing deadline").stdout

    assert [h["role"] for h in plain] == ["user"]
    assert plain[0]["relevant"] is True
    assert sorted(h["role"] for h in traffic) == ["tool", "user"]
    assert "Nothing in memory matches 'quarterly tax filing deadline'" in unrelated
    assert "(unrelated)" in unrelated


# --- export, import, reembed --------------------------------------------------------------


async def _rich_memory(store: MemoryStore) -> None:
    await store.create_block(
        "default",
        "persona",
        "I am Ada.\nI help.",
        description="who I am",
        char_limit=500,
        pinned=True,
        tags=["self"],
        metadata={"source": "setup", "n": 1.5},
    )
    await store.create_block("default", "task", "Fix the roof.", kind=BlockKind.WORKING)
    await store.create_block(
        "default", "old", "An old note ✨", kind=BlockKind.ARCHIVAL, permission=Permission.ADMIN
    )
    await store.create_block("default", "team", "Ship on Fridays.")
    await store.share_block("default", "team", "bob", Permission.APPEND)
    await store.append_to_block("default", "team", "Demo on Mondays.")
    await store.create_block("bob", "mine", "Bob's own block.")
    await store.share_block("bob", "mine", "default", Permission.READ_ONLY)
    await store.add_message(
        "default", "user", "Hello!", created_at=datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    )
    await store.add_message(
        "default",
        "assistant",
        "Hi Sam.",
        conversation_id="c2",
        tags=["greeting"],
        metadata={"to": "user"},
    )


def test_export_then_import_into_a_fresh_database_round_trips_byte_for_byte(
    tmp_path: Path,
) -> None:
    first_db, second_db = tmp_path / "a.db", tmp_path / "b.db"
    seed(first_db, _rich_memory)
    first = tmp_path / "first.jsonl"
    second = tmp_path / "second.jsonl"

    ok(first_db, "export", str(first))
    imported = ok(second_db, "import", str(first))
    ok(second_db, "export", str(second))

    assert "Imported 6 records" in imported.stderr
    assert first.read_bytes() == second.read_bytes()
    records = [json.loads(line) for line in first.read_text().splitlines()]
    assert records[0] == {"agent": "default", "format": "satchel-memory", "version": 1}
    blocks = {r["block"]["label"]: r["block"] for r in records if r.get("type") == "block"}
    assert set(blocks) == {"persona", "task", "old", "team"}  # bob's block is bob's
    assert blocks["team"]["shares"] == {"bob": "append"}
    assert blocks["team"]["version"] == 3
    assert blocks["persona"]["metadata"] == {"n": 1.5, "source": "setup"}
    team = seed(second_db, lambda s: s.get_block("bob", "team"))
    assert team.value == "Ship on Fridays.\nDemo on Mondays."
    assert "Hello!" in [m.content for m in seed(second_db, lambda s: s.list_messages("default"))]


def test_export_to_stdout_prints_the_same_lines(db: Path, tmp_path: Path) -> None:
    seed(db, _rich_memory)
    ok(db, "export", str(tmp_path / "x.jsonl"))

    assert ok(db, "export").stdout == (tmp_path / "x.jsonl").read_text()


def test_imported_entries_are_searchable(tmp_path: Path) -> None:
    first_db, second_db = tmp_path / "a.db", tmp_path / "b.db"
    seed(first_db, _rich_memory)
    dump = ok(first_db, "export").stdout

    ok(second_db, "import", "-", stdin=dump)

    hits = json.loads(ok(second_db, "search", "old note", "--json").stdout)
    assert hits[0]["label"] == "old"


def test_importing_records_that_exist_already_imports_nothing(db: Path, tmp_path: Path) -> None:
    seed(db, _rich_memory)
    dump = tmp_path / "dump.jsonl"
    ok(db, "export", str(dump))
    ok(db, "set", "extra", "x")
    before = ok(db, "export").stdout

    one_error_line(run(db, "import", str(dump)), 2, "already holds", "Nothing")

    assert ok(db, "export").stdout == before


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("", ("empty",)),
        ('{"format": "something-else", "version": 1}\n', ("line 1",)),
        (
            '{"format": "satchel-memory", "version": 1, "agent": "default"}\n'
            '{"type": "block", "block": {}}\n',
            ("line 2",),
        ),
        ('{"format": "satchel-memory", "version": 1, "agent": "default"}\nnot json\n', ("line 2",)),
    ],
)
def test_a_malformed_import_file_names_the_bad_line(
    db: Path, tmp_path: Path, content: str, words: tuple[str, ...]
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)

    one_error_line(run(db, "import", str(bad)), 2, *words)


def test_importing_a_missing_file_is_a_usage_error(db: Path, tmp_path: Path) -> None:
    one_error_line(run(db, "import", str(tmp_path / "none.jsonl")), 2, "none.jsonl")


def test_reembed_shows_progress_and_counts_the_texts(db: Path) -> None:
    seed(db, _rich_memory)

    result = ok(db, "reembed")

    assert "Embedding" in result.stderr
    assert "Embedded 7 texts." in result.stderr


def test_load_as_copies_an_entry_into_working_memory_and_keeps_it(db: Path) -> None:
    ok(db, "set", "trip", "Lisbon in May.")
    ok(db, "archive", "trip")

    out = ok(db, "load", "trip", "--as", "plans")

    assert "as 'plans'" in out.stdout
    blocks = {
        b["label"]: b["kind"] for b in json.loads(ok(db, "blocks", "--json").stdout)["blocks"]
    }
    assert blocks == {"trip": "archival", "plans": "working"}
    assert seed(db, lambda s: s.get_block("default", "plans")).value == "Lisbon in May."


def test_archive_as_writes_the_entry_and_removes_the_block(db: Path) -> None:
    ok(db, "set", "scratch", "Call the plumber.", "--permission", "admin")

    out = ok(db, "archive", "scratch", "--as", "done-2026-11", "--json")

    assert json.loads(out.stdout)["label"] == "done-2026-11"
    blocks = {
        b["label"]: b["kind"] for b in json.loads(ok(db, "blocks", "--json").stdout)["blocks"]
    }
    assert blocks == {"done-2026-11": "archival"}


def test_a_refused_move_says_as_and_keeps_both_blocks(db: Path) -> None:
    ok(db, "set", "trip", "Lisbon in May.")
    ok(db, "archive", "trip")
    ok(db, "set", "plans", "Already here.")

    taken = run(db, "load", "trip", "--as", "plans")
    in_context = run(db, "load", "plans", "--as", "other")

    one_error_line(taken, 2, "'plans' already exists", "--as")
    one_error_line(in_context, 2, "not archival")
    assert seed(db, lambda s: s.get_block("default", "plans")).value == "Already here."
    assert seed(db, lambda s: s.get_block("default", "trip")).value == "Lisbon in May."


def test_listings_count_one_block_and_one_hit_in_the_singular(db: Path) -> None:
    ok(db, "set", "human", "Name: Ada. Likes green tea.")

    listed = ok(db, "blocks")
    ok(db, "archive", "human")
    found = ok(db, "search", "green tea", "--domain", "archival_memory")

    assert "1 block of 'default'" in listed.stdout
    assert "1 hit for 'green tea'" in found.stdout
