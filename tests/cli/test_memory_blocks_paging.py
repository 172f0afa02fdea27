"""``satchel memory blocks --offset/--limit``: one page of the listing, a footer naming
the next page, JSON with the total, and one clear line for a bad offset or limit; on a
real SQLite file through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from satchel.cli import app
from satchel.memory import BlockKind, SQLiteStore

runner = CliRunner()

ENTRIES = 120


def run(db: Path, *args: str) -> Result:
    env = {"COLUMNS": "200", "SATCHEL_TEMPLATE": "none", "SATCHEL_DB": str(db)}
    return runner.invoke(app, ["memory", "blocks", *args], env=env, catch_exceptions=False)


def listed(db: Path, *args: str) -> dict[str, Any]:
    result = run(db, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("paging") / "memory.db"

    async def fill() -> None:
        async with SQLiteStore(path, embedder=None) as store:
            await store.create_block("default", "human", "Ada.")
            for i in range(ENTRIES):
                await store.create_block(
                    "default", f"note{i:03d}", f"entry {i}", kind=BlockKind.ARCHIVAL
                )

    anyio.run(fill)
    return path


def test_the_first_page_holds_50_blocks_and_says_where_the_next_starts(db: Path) -> None:
    result = run(db)

    assert result.exit_code == 0, result.output
    assert f"{ENTRIES + 1} blocks of 'default'" in result.stdout
    assert "human" in result.stdout
    assert "note048" in result.stdout
    assert "note049" not in result.stdout
    assert result.stdout.rstrip().endswith(f"showing 1–50 of {ENTRIES + 1}; next: --offset 50")


def test_the_footer_s_offset_opens_the_next_page_and_the_last_page_says_so(db: Path) -> None:
    second = run(db, "--offset", "50").stdout
    last = run(db, "--offset", "100", "--limit", "50").stdout

    assert "note049" in second
    assert "note098" in second
    assert "note099" not in second
    assert f"showing 51–100 of {ENTRIES + 1}; next: --offset 100" in second
    assert "note119" in last
    assert f"showing 101–{ENTRIES + 1} of {ENTRIES + 1} (the last page)" in last


def test_a_listing_that_fits_one_page_has_no_footer(db: Path) -> None:
    result = run(db, "--kind", "core")

    assert result.exit_code == 0, result.output
    assert "1 block of 'default'" in result.stdout
    assert "showing" not in result.stdout


def test_json_gives_the_page_with_its_total_and_next_offset(db: Path) -> None:
    page = listed(db, "--kind", "archival", "--offset", "10", "--limit", "5")
    last = listed(db, "--kind", "archival", "--offset", str(ENTRIES - 2))

    assert [b["label"] for b in page["blocks"]] == [f"note{i:03d}" for i in range(10, 15)]
    assert (page["total"], page["offset"], page["limit"], page["next_offset"]) == (
        ENTRIES,
        10,
        5,
        15,
    )
    assert page["blocks"][0]["value"] == "entry 10"
    assert [b["label"] for b in last["blocks"]] == ["note118", "note119"]
    assert last["next_offset"] is None


def test_an_offset_past_the_end_says_where_the_last_page_starts(db: Path) -> None:
    result = run(db, "--offset", "500", "--limit", "20")

    assert result.exit_code == 0, result.output
    assert f"the listing has {ENTRIES + 1}" in result.stdout
    assert "--offset 120" in result.stdout
    assert listed(db, "--offset", "500")["blocks"] == []


@pytest.mark.parametrize(
    ("args", "option", "words"),
    [
        (("--limit", "0"), "'--limit'", "from 1 to 1000, not '0'"),
        (("--limit", "1001"), "'--limit'", "from 1 to 1000, not '1001'"),
        (("--limit", "-3"), "'--limit'", "from 1 to 1000, not '-3'"),
        (("--offset", "-1"), "'--offset'", "whole number >= 0, not '-1'"),
        (("--offset", str(2**70)), "'--offset'", "whole number >= 0"),
        (("--offset", "ten"), "'--offset'", "valid integer"),
        (("--json", "--limit", "0"), "'--limit'", "from 1 to 1000"),
    ],
)
def test_a_bad_offset_or_limit_is_one_error_line_naming_the_option(
    db: Path, args: tuple[str, ...], option: str, words: str
) -> None:
    result = run(db, *args)

    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: Invalid value for {option}")
    assert words in line
    assert "Traceback" not in result.output


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(offset=st.integers(0, ENTRIES + 5), limit=st.integers(1, 40))
def test_any_page_is_its_slice_of_the_whole_listing(db: Path, offset: int, limit: int) -> None:
    whole = listed(db, "--limit", "1000")
    page = listed(db, "--offset", str(offset), "--limit", str(limit))

    assert page["blocks"] == whole["blocks"][offset : offset + limit]
    assert page["total"] == whole["total"] == ENTRIES + 1
    following = offset + limit
    assert page["next_offset"] == (following if following < ENTRIES + 1 else None)
