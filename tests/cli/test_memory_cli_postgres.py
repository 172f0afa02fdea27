"""``satchel memory`` on a real PostgreSQL database (the embedded server): the same
commands as on SQLite, and an export from SQLite imported into PostgreSQL round-trips
exactly."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner, Result

from postgres_server import PostgresServer
from satchel.cli import app
from satchel.consent import ConsentScope, PermissionBroker, PostgresApprovalStore

pytestmark = pytest.mark.postgres

runner = CliRunner()


def run(db: str, *args: str) -> Result:
    return runner.invoke(
        app, ["memory", *args, "--db", db], env={"COLUMNS": "200"}, catch_exceptions=False
    )


def ok(db: str, *args: str) -> Result:
    result = run(db, *args)
    assert result.exit_code == 0, result.output
    return result


def test_memory_commands_work_on_a_postgres_url(postgres_server: PostgresServer) -> None:
    url = postgres_server.create_database()
    ok(url, "set", "persona", "I am a careful assistant.")
    ok(url, "append", "persona", "I like tea.")
    shown = ok(url, "show", "persona", "--json")
    assert "I like tea." in shown.stdout
    ok(url, "archive", "persona")
    found = ok(url, "search", "tea", "--json")
    assert "persona" in found.stdout


def test_an_export_from_sqlite_imports_into_postgres_exactly(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    sqlite_db = str(tmp_path / "memory.db")
    ok(sqlite_db, "set", "persona", "Loves hiking in the Alps.")
    ok(sqlite_db, "set", "human", "Name: Ada. Works on compilers.")
    ok(sqlite_db, "append", "human", "Prefers short answers.")
    ok(sqlite_db, "archive", "human")
    dump = tmp_path / "dump.jsonl"
    ok(sqlite_db, "export", str(dump))

    url = postgres_server.create_database()
    ok(url, "import", str(dump))
    again = ok(url, "export").stdout
    assert again == dump.read_text(encoding="utf-8")
    assert "human" in ok(url, "search", "compilers", "--json").stdout

    # Importing the same records again: refused as a whole, or skipped when asked.
    refused = run(url, "import", str(dump))
    assert refused.exit_code == 2
    ok(url, "import", str(dump), "--on-conflict", "skip")
    assert ok(url, "export").stdout == again


def test_an_unreachable_postgres_server_is_one_clear_line() -> None:
    result = run("postgresql://satchel@127.0.0.1:1/nothing", "blocks")
    assert result.exit_code == 1
    assert result.output.count("\n") == 1
    assert result.output.startswith("Error:")


def test_approvals_are_listed_and_decided_on_a_postgres_url(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.create_database()

    async def ask() -> str:
        async with PermissionBroker(PostgresApprovalStore(url)) as broker:
            scope = ConsentScope.tool_execution("wipe", {"path": "/tmp/x"}, agent="alice")
            request = await broker.request(
                scope,
                "wipe /tmp/x",
                "test",
                agent="alice",
                arguments={"path": "/tmp/x"},
                wait=False,
            )
            return request.id

    approval_id = anyio.run(ask)
    listed = runner.invoke(
        app, ["approvals", "list", "--db", url, "--json"], catch_exceptions=False
    )
    assert [r["id"] for r in json.loads(listed.output)] == [approval_id]
    decided = runner.invoke(
        app, ["approvals", "approve", approval_id, "--db", url, "--json"], catch_exceptions=False
    )
    assert json.loads(decided.output)["status"] == "approved"
