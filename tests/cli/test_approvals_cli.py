"""``satchel approvals``: a human decides, from the CLI, a destructive call that a
gated registry left pending in the same database file."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from typer.testing import CliRunner, Result

from satchel import PermissionBroker, SQLiteApprovalStore, ToolContext, ToolRegistry, tool
from satchel.cli import app
from satchel.cli._approvals import parse_duration
from satchel.consent import with_approval

runner = CliRunner()
deleted: list[str] = []


@tool(destructive=True)
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    deleted.append(path)
    return f"deleted {path}"


def cli(db: Path, *args: str) -> Result:
    return runner.invoke(
        app, ["approvals", *args, "--db", str(db)], env={"COLUMNS": "200"}, catch_exceptions=False
    )


def make_db(tmp_path: Path) -> Path:
    db = tmp_path / "memory.db"

    async def init() -> None:
        async with PermissionBroker(SQLiteApprovalStore(db)):
            pass

    anyio.run(init)
    return db


async def first_call(db: Path, path: str) -> str:
    async with PermissionBroker(SQLiteApprovalStore(db)) as broker:
        gated = with_approval(ToolRegistry([delete_file]), broker)
        result = await gated.call("delete_file", {"path": path})
        assert result.error is not None
        assert result.error.details["status"] == "pending_confirmation"
        return str(result.error.details["approval_id"])


async def second_call(db: Path, path: str, approval_id: str) -> tuple[bool, str]:
    async with PermissionBroker(SQLiteApprovalStore(db)) as broker:
        gated = with_approval(ToolRegistry([delete_file]), broker)
        result = await gated.call(
            "delete_file", {"path": path}, ToolContext(approval_id=approval_id)
        )
        return result.ok, result.error.kind if result.error else ""


def test_approving_from_the_cli_lets_exactly_that_call_run_once(tmp_path: Path) -> None:
    db = make_db(tmp_path)
    approval_id = anyio.run(first_call, db, "a.txt")
    assert "a.txt" not in deleted

    listed = cli(db, "list", "--json")
    assert listed.exit_code == 0
    rows = json.loads(listed.output)
    assert [r["id"] for r in rows] == [approval_id]
    assert rows[0]["arguments"] == {"path": "a.txt"}

    assert cli(db, "approve", approval_id).exit_code == 0
    assert anyio.run(second_call, db, "a.txt", approval_id) == (True, "")
    assert deleted.count("a.txt") == 1
    again = anyio.run(second_call, db, "a.txt", approval_id)
    assert again == (False, "denied")
    assert deleted.count("a.txt") == 1
    assert json.loads(cli(db, "list", "--json").output) == []


def test_an_approval_does_not_cover_other_arguments(tmp_path: Path) -> None:
    db = make_db(tmp_path)
    approval_id = anyio.run(first_call, db, "b.txt")
    assert cli(db, "approve", approval_id).exit_code == 0
    assert anyio.run(second_call, db, "other.txt", approval_id) == (False, "denied")
    assert "other.txt" not in deleted


def test_denying_from_the_cli_refuses_the_call(tmp_path: Path) -> None:
    db = make_db(tmp_path)
    approval_id = anyio.run(first_call, db, "c.txt")
    denied = cli(db, "deny", approval_id, "--json")
    assert json.loads(denied.output)["status"] == "denied"
    assert anyio.run(second_call, db, "c.txt", approval_id) == (False, "denied")
    assert "c.txt" not in deleted
    everything = json.loads(cli(db, "list", "--all", "--json").output)
    assert [r["status"] for r in everything] == ["denied"]


def test_deciding_twice_or_an_unknown_id_is_one_clear_error(tmp_path: Path) -> None:
    db = make_db(tmp_path)
    approval_id = anyio.run(first_call, db, "d.txt")
    assert cli(db, "approve", approval_id).exit_code == 0
    twice = cli(db, "deny", approval_id)
    assert twice.exit_code == 2
    assert twice.output.count("\n") == 1
    unknown = cli(db, "approve", "no-such-id")
    assert unknown.exit_code == 2
    assert "no approval request" in unknown.output


def test_a_missing_database_or_a_bad_duration_exits_2(tmp_path: Path) -> None:
    missing = cli(tmp_path / "nope.db", "list")
    assert missing.exit_code == 2
    db = make_db(tmp_path)
    bad = cli(db, "approve", "x", "--for", "forever")
    assert bad.exit_code == 2
    assert "not a duration" in bad.output


def test_durations_parse_in_common_units() -> None:
    assert parse_duration("30s").total_seconds() == 30
    assert parse_duration("10m").total_seconds() == 600
    assert parse_duration("1.5h").total_seconds() == 5400
    assert parse_duration("2 days").total_seconds() == 172800
