"""A new agent's starting blocks from the command line (``--template``), ``satchel
memory agents``, and ``SATCHEL_AGENT`` in every ``memory`` and ``approvals`` command."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner, Result

from postgres_server import PostgresServer
from satchel.cli import app
from satchel.consent import ConsentScope, PermissionBroker, SQLiteApprovalStore
from satchel.memory import BlockKind, Permission, SQLiteStore

runner = CliRunner()


def run(*args: str, **env: str) -> Result:
    return runner.invoke(app, list(args), env={"COLUMNS": "200", **env}, catch_exceptions=False)


def ok(*args: str, **env: str) -> Result:
    result = run(*args, **env)
    assert result.exit_code == 0, result.output
    return result


def one_error_line(result: Result, *words: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def labels(db: Path, agent: str = "default") -> list[str]:
    found = json.loads(ok("memory", "blocks", "--db", str(db), "--agent", agent, "--json").stdout)
    return [block["label"] for block in found["blocks"]]


def test_the_first_append_to_human_on_a_fresh_database_succeeds(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")

    ok("memory", "append", "human", "Name: Ada.", "--db", db)

    human = json.loads(ok("memory", "show", "human", "--db", db, "--json").stdout)
    assert human["value"] == "Name: Ada."
    assert human["char_limit"] == 5000
    assert "the person you talk with" in human["description"]
    assert labels(tmp_path / "m.db") == ["human", "persona"]


def test_reading_commands_do_not_set_an_agent_up_and_say_so(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    ok("memory", "set", "notes", "x", "--db", db, "--agent", "bob", "--template", "none")

    shown = ok("memory", "blocks", "--db", db, "--agent", "ada").stdout

    assert "No blocks for agent 'ada'. It has not been used yet" in " ".join(shown.split())
    assert labels(tmp_path / "m.db", "ada") == []
    empty = ok("memory", "blocks", "--db", db, "--agent", "bob", "--kind", "working").stdout
    assert "not been used" not in empty


def test_a_deleted_starting_block_is_not_created_again_by_the_next_command(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    ok("memory", "append", "persona", "I am terse.", "--db", str(db))

    async def delete_human() -> None:
        async with SQLiteStore(db, embedder=None) as store:
            await store.configure_block("default", "human", permission=Permission.ADMIN)
            await store.delete_block("default", "human")

    anyio.run(delete_human)
    ok("memory", "append", "persona", "I like tea.", "--db", str(db))

    assert labels(db) == ["persona"]


def test_a_template_file_gives_a_new_agent_its_blocks(tmp_path: Path) -> None:
    template = tmp_path / "bakery.toml"
    template.write_text(
        '[[blocks]]\nlabel = "persona"\nvalue = "I am Sam."\nchar_limit = 300\n\n'
        '[[blocks]]\nlabel = "orders"\nkind = "working"\ndescription = "Open orders."\n',
        encoding="utf-8",
    )
    db = str(tmp_path / "m.db")

    ok(
        "memory",
        "append",
        "orders",
        "Rye for Ada, Friday",
        "--db",
        db,
        SATCHEL_TEMPLATE=str(template),
    )

    found = json.loads(ok("memory", "blocks", "--db", db, "--json").stdout)["blocks"]
    by_label = {b["label"]: b for b in found}
    assert sorted(by_label) == ["orders", "persona"]
    assert by_label["orders"]["kind"] == BlockKind.WORKING.value
    assert by_label["orders"]["value"] == "Rye for Ada, Friday"
    assert by_label["persona"]["char_limit"] == 300
    [agent] = json.loads(ok("memory", "agents", "--db", db, "--json").stdout)
    assert agent["template"] == "bakery.toml"


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("t.toml", '[[blocks]]\nlabel = "a"\ncolour = "red"\n', ["blocks[0] (label 'a').colour"]),
        ("t.toml", '[[blocks]]\nlabel = "a"\nchar_limit = -1\n', ["char_limit", "0"]),
        ("t.json", '{"blocks": [{"label": "a"}, {"label": "a"}]}', ["'a' appears twice"]),
        ("t.json", '{"blocks": [', ["not valid JSON"]),
        ("t.yaml", "blocks: []", [".toml or .json"]),
    ],
)
def test_a_bad_template_is_one_line_naming_the_file_and_field(
    tmp_path: Path, name: str, text: str, words: list[str]
) -> None:
    template = tmp_path / name
    template.write_text(text, encoding="utf-8")
    db = tmp_path / "m.db"

    result = run("memory", "append", "human", "x", "--db", str(db), "--template", str(template))

    one_error_line(result, str(template), *words)
    assert not db.exists()


def test_serve_with_a_missing_template_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = run("serve", "--db", str(tmp_path / "m.db"), "--template", str(tmp_path / "no.toml"))

    one_error_line(result, "no.toml", "cannot read")


def test_memory_agents_lists_counts_and_templates(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    ok("memory", "append", "human", "Ada", "--db", str(db), "--agent", "ada")
    ok("memory", "set", "notes", "x", "--db", str(db), "--agent", "bob", "--template", "none")

    async def more() -> None:
        async with SQLiteStore(db, embedder=None) as store:
            await store.create_block("ada", "trip", "Kyoto", kind=BlockKind.ARCHIVAL)
            await store.add_message("ada", "user", "hello")

    anyio.run(more)

    rows = json.loads(ok("memory", "agents", "--db", str(db), "--json").stdout)
    table = ok("memory", "agents", "--db", str(db)).stdout

    assert [(r["name"], r["blocks"], r["archival"], r["messages"]) for r in rows] == [
        ("ada", 2, 1, 1),
        ("bob", 1, 0, 0),
    ]
    assert [r["template"] for r in rows] == ["default", "none"]
    assert all(r["created_at"] and r["last_active"] for r in rows)
    assert "2 agents" in table
    assert "default" in table
    assert "none" in table


def test_memory_agents_on_an_empty_database_says_so(tmp_path: Path) -> None:
    db = tmp_path / "m.db"

    async def create() -> None:
        async with SQLiteStore(db, embedder=None):
            pass

    anyio.run(create)

    assert "No agents yet." in ok("memory", "agents", "--db", str(db)).stdout


def test_memory_commands_act_as_satchel_agent(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")

    ok("memory", "append", "human", "Ada", "--db", db, SATCHEL_AGENT="ada")

    assert labels(tmp_path / "m.db", "ada") == ["human", "persona"]
    assert labels(tmp_path / "m.db", "default") == []
    shown = ok("memory", "show", "human", "--db", db, "--json", SATCHEL_AGENT="ada")
    assert json.loads(shown.stdout)["agent"] == "ada"
    other = ok("memory", "blocks", "--db", db, "--agent", "bob", "--json", SATCHEL_AGENT="ada")
    assert json.loads(other.stdout)["blocks"] == []  # the option wins over the variable


async def _ask(db: Path, agent: str) -> str:
    async with PermissionBroker(SQLiteApprovalStore(db)) as broker:
        scope = ConsentScope.memory_edit("human", owner=agent, agent=agent, operation="append")
        request = await broker.request(scope, f"{agent} edits", "test", agent=agent, wait=False)
        return request.id


def test_approvals_commands_honour_satchel_agent(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    ada, bob = anyio.run(_ask, db, "ada"), anyio.run(_ask, db, "bob")

    every = json.loads(ok("approvals", "list", "--db", str(db), "--json").stdout)
    mine = json.loads(
        ok("approvals", "list", "--db", str(db), "--json", SATCHEL_AGENT="ada").stdout
    )
    refused = run("approvals", "approve", bob, "--db", str(db), SATCHEL_AGENT="ada")
    approved = ok("approvals", "approve", ada, "--db", str(db), "--json", SATCHEL_AGENT="ada")

    assert sorted(r["id"] for r in every) == sorted([ada, bob])
    assert [r["id"] for r in mine] == [ada]
    one_error_line(refused, bob, "'bob'", "'ada'")
    assert json.loads(approved.stdout)["status"] == "approved"
    denied = run("approvals", "deny", bob, "--db", str(db), "--agent", "ada")
    one_error_line(denied, "'bob'")
    shown = run("approvals", "show", bob, "--db", str(db), SATCHEL_AGENT="ada")
    one_error_line(shown, "'bob'")
    assert json.loads(ok("approvals", "show", bob, "--db", str(db)).stdout)["status"] == "pending"


@pytest.mark.postgres
def test_memory_agents_and_the_default_blocks_on_postgres(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.create_database()

    ok("memory", "append", "human", "Ada", "--db", url, "--agent", "ada")
    ok("memory", "append", "human", "again", "--db", url, "--agent", "ada")
    ok("memory", "set", "notes", "x", "--db", url, "--agent", "bob", "--template", "none")

    rows = json.loads(ok("memory", "agents", "--db", url, "--json").stdout)
    assert [(r["name"], r["blocks"], r["template"]) for r in rows] == [
        ("ada", 2, "default"),
        ("bob", 1, "none"),
    ]
    human = json.loads(
        ok("memory", "show", "human", "--db", url, "--agent", "ada", "--json").stdout
    )
    assert human["value"] == "Ada\nagain"
