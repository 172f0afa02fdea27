"""``satchel memory merge FROM INTO``: one person's memory under two names brought
together through the real CLI, on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from postgres_server import PostgresServer
from satchel.cli import app

runner = CliRunner()


def run(db: str, *args: str) -> Result:
    env = {"COLUMNS": "200", "SATCHEL_TEMPLATE": "none"}
    return runner.invoke(app, ["memory", *args, "--db", db], env=env, catch_exceptions=False)


def ok(db: str, *args: str) -> Result:
    result = run(db, *args)
    assert result.exit_code == 0, result.output
    return result


def _split(db: str) -> None:
    ok(db, "set", "human", "Uses tabs.", "--agent", "default")
    ok(db, "set", "human", "Likes green tea.", "--agent", "me")
    ok(db, "set", "dentist", "Dr Lee, Tuesdays.", "--agent", "default")


def _merge_and_check(db: str) -> None:
    _split(db)
    preview = ok(db, "merge", "default", "me", "--dry-run")
    assert "Would merge 'default' into 'me':" in preview.stdout
    assert "human: joined, 1 line added" in preview.stdout
    assert "blocks moved as they are: dentist" in preview.stdout
    assert "Nothing was written" in preview.stdout
    assert "Uses tabs." in ok(db, "show", "human", "--agent", "default").stdout

    done = json.loads(ok(db, "merge", "default", "me", "--json").stdout)

    assert done["dry_run"] is False
    assert done["moved"] == ["dentist"]
    human = json.loads(ok(db, "show", "human", "--agent", "me", "--json").stdout)
    assert human["value"].splitlines() == ["Likes green tea.", "Uses tabs."]
    assert "Dr Lee" in ok(db, "show", "dentist", "--agent", "me").stdout
    agents = json.loads(ok(db, "agents", "--json").stdout)
    default = [a for a in agents if a["name"] == "default"]
    assert all(a["blocks"] == 0 and a["archival"] == 0 for a in default)


def test_merge_brings_two_names_together_after_a_dry_run(tmp_path: Path) -> None:
    _merge_and_check(str(tmp_path / "memory.db"))


@pytest.mark.postgres
def test_merge_works_on_a_postgres_url(postgres_server: PostgresServer) -> None:
    _merge_and_check(postgres_server.create_database())


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (("me", "me"), "itself"),
        (("auto", "me"), "FROM"),
        (("me", " "), "INTO"),
        (("typo", "me"), "no memory to merge"),
    ],
)
def test_a_bad_merge_is_one_error_line_and_exit_2(
    tmp_path: Path, args: tuple[str, str], word: str
) -> None:
    db = str(tmp_path / "memory.db")
    ok(db, "set", "human", "x", "--agent", "me")
    result = run(db, "merge", *args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert word in lines[0]


def test_merge_on_a_missing_database_is_one_error_line(tmp_path: Path) -> None:
    result = run(str(tmp_path / "nothing.db"), "merge", "default", "me")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
