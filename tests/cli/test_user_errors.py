"""Every mistake a person can make at the command line is one ``Error: ...`` line on
stderr and exit status 2, never a traceback; tables show what the next command needs."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import anyio
import click
import pytest
from typer.main import get_command
from typer.testing import CliRunner, Result

from satchel import PermissionBroker, SQLiteApprovalStore, ToolRegistry, tool
from satchel.cli import app
from satchel.consent import with_approval
from satchel.memory import BlockKind, SQLiteStore

runner = CliRunner()


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, list(args), env=env, catch_exceptions=False)


def assert_one_line_error(result: Result, *words: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.output
    for word in words:
        assert word in lines[0]
    return lines[0]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"

    async def fill() -> None:
        store = await SQLiteStore.open(path, embedder=None)
        try:
            await store.create_block("default", "human", "Name: Ada")
        finally:
            await store.close()

    anyio.run(fill)
    return path


# --- memory ----------------------------------------------------------------------------


def test_memory_export_into_a_missing_folder_is_one_line(db: Path, tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "dir" / "out.jsonl"

    result = run("memory", "export", str(target), "--db", str(db))

    assert_one_line_error(result, "no directory", str(target.parent))
    assert not target.parent.exists()


@pytest.mark.parametrize(
    "command",
    [
        ["show", "nosuch"],
        ["append", "nosuch", "text"],
        ["archive", "nosuch"],
        ["load", "nosuch"],
        ["configure", "nosuch", "--limit", "5"],
    ],
)
def test_an_unknown_block_is_one_line_and_exit_2(db: Path, command: list[str]) -> None:
    result = run("memory", *command, "--db", str(db))

    assert_one_line_error(result, "'nosuch'")


def test_a_refused_write_is_one_line_and_exit_2(db: Path) -> None:
    assert run("memory", "configure", "human", "--limit", "10", "--db", str(db)).exit_code == 0

    result = run("memory", "append", "human", "far more than ten characters", "--db", str(db))

    assert_one_line_error(result, "'human'")


def test_memory_search_tables_shorten_a_huge_hit_and_json_keeps_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    huge = "whale " * 200_000

    async def fill() -> None:
        store = await SQLiteStore.open(path, embedder=None)
        try:
            await store.create_block("default", "big", huge, kind=BlockKind.ARCHIVAL)
        finally:
            await store.close()

    anyio.run(fill)
    env = {"COLUMNS": "120"}

    table = run("memory", "search", "whale", "--db", str(path), env=env)
    whole = run("memory", "search", "whale", "--db", str(path), "--json", env=env)

    assert table.exit_code == 0, table.output
    assert len(table.stdout) < 3_000
    assert "1,200,000" in table.stdout
    assert json.loads(whole.stdout)[0]["text"] == huge


# --- approvals -------------------------------------------------------------------------


@tool(destructive=True)
def remove(path: str) -> str:
    """Remove a file.

    Args:
        path: The file.
    """
    return f"removed {path}"


def pending_requests(db: Path, *paths: str) -> list[str]:
    async def ask() -> list[str]:
        async with PermissionBroker(SQLiteApprovalStore(db)) as broker:
            gated = with_approval(ToolRegistry([remove]), broker)
            ids: list[str] = []
            for path in paths:
                result = await gated.call("remove", {"path": path})
                assert result.error is not None
                ids.append(str(result.error.details["approval_id"]))
            return ids

    return anyio.run(ask)


@pytest.mark.parametrize("verb", ["show", "approve", "deny"])
def test_an_unknown_approval_id_is_one_line_and_exit_2(db: Path, verb: str) -> None:
    pending_requests(db, "a.txt")

    result = run("approvals", verb, "ap_no_such_id", "--db", str(db))

    assert_one_line_error(result, "'ap_no_such_id'")


def test_deciding_a_request_twice_is_one_line_and_exit_2(db: Path) -> None:
    (request_id,) = pending_requests(db, "a.txt")
    assert run("approvals", "approve", request_id, "--db", str(db)).exit_code == 0

    assert_one_line_error(run("approvals", "deny", request_id, "--db", str(db)))


@pytest.mark.parametrize("columns", [80, 100])
def test_approvals_list_is_readable_on_a_narrow_terminal(db: Path, columns: int) -> None:
    ids = pending_requests(db, "a.txt", "b.txt")

    result = run("approvals", "list", "--db", str(db), env={"COLUMNS": str(columns)})

    assert result.exit_code == 0, result.output
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert lines[0] == "2 approval requests"
    for request_id in ids:
        assert request_id in lines  # whole, alone on its line: copied with a double-click
    assert all(len(line) <= columns for line in lines)
    # no cell squeezed to a word or a few letters per line, as the 8-column table was
    assert [line for line in lines if 0 < len(line.strip()) <= 12] == []
    assert "  What: run tool 'remove'" in result.stdout
    assert "  Why:  Run remove(path='a.txt')" in lines


def test_approvals_list_is_a_table_on_a_wide_terminal(db: Path) -> None:
    pending_requests(db, "a.txt")

    result = run("approvals", "list", "--db", str(db), env={"COLUMNS": "200"})

    assert "1 approval request" in result.stdout
    assert "1 approval requests" not in result.stdout
    assert "┃ Status" in result.stdout


def test_approve_deny_and_show_take_a_unique_prefix_of_the_id(db: Path) -> None:
    first, second = pending_requests(db, "a.txt", "b.txt")
    common = next(i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)

    shown = run("approvals", "show", first[: common + 1], "--db", str(db))
    assert json.loads(shown.stdout)["id"] == first
    approved = run("approvals", "approve", first[: common + 1], "--db", str(db), "--json")
    assert json.loads(approved.stdout)["status"] == "approved"
    denied = run("approvals", "deny", "--db", str(db), "--json", "--", second[: common + 1])
    assert json.loads(denied.stdout)["status"] == "denied"


def test_an_ambiguous_prefix_is_one_line_listing_the_candidates(db: Path) -> None:
    first, second = pending_requests(db, "a.txt", "b.txt")
    prefix = "ap_" if first.startswith("ap_") and second.startswith("ap_") else ""

    line = assert_one_line_error(run("approvals", "approve", "--db", str(db), "--", prefix))

    assert first in line
    assert second in line
    assert "give more of it" in line


# --- help ------------------------------------------------------------------------------


def _commands(command: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def test_no_help_shows_bool_or_list_placeholders() -> None:
    paths = list(_commands(get_command(app)))
    assert len(paths) > 15
    for path in paths:
        result = run(*path, "--help", env={"COLUMNS": "200"})
        assert result.exit_code == 0, (path, result.output)
        assert re.search(r"<bool>|<list\[", result.stdout) is None, (path, result.stdout)


@pytest.mark.parametrize("command", [["memory", "blocks"], ["approvals", "list"], ["serve"]])
def test_a_folder_given_as_the_database_is_one_line(tmp_path: Path, command: list[str]) -> None:
    result = run(*command, "--db", str(tmp_path))

    assert_one_line_error(result, "--db", "folder")


@pytest.mark.parametrize(
    "command",
    [
        ["serve"],
        ["console"],
        ["memory", "set", "human", "Name: Ada"],
        ["memory", "append", "human", "Likes tea."],
        ["approvals", "list"],
        ["install", "cursor", "--dry-run"],
    ],
)
def test_a_database_in_a_missing_folder_is_one_line_and_no_folder_is_made(
    tmp_path: Path, command: list[str]
) -> None:
    missing = tmp_path / "typo" / "memory"

    result = run(*command, "--db", str(missing / "satchel.db"), env={"HOME": str(tmp_path)})

    assert_one_line_error(result, "--db", str(missing))
    assert not (tmp_path / "typo").exists()


def test_the_default_databases_folder_is_made_when_missing(tmp_path: Path) -> None:
    data = tmp_path / "new-home" / "data"
    env = {"XDG_DATA_HOME": str(data), "SATCHEL_DB": ""}

    result = run("memory", "set", "human", "Name: Ada", env=env)

    assert result.exit_code == 0, result.output
    assert (data / "satchel" / "satchel.db").is_file()
