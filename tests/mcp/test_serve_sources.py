"""``satchel serve`` with sources: a folder added by ``satchel sources add`` in another
process is searchable over MCP with file and line, and stays current when a note
changes while the server runs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from .conftest import satchel_stdio

pytestmark = pytest.mark.anyio


def _ok(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is not True, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_a_folder_of_notes_is_served_searchable_and_stays_current(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "car.md").write_text("# Car\n\nThe MOT is due in April.\nTyres: 205/55 R16.\n")
    db = tmp_path / "memory.db"
    await anyio.run_process(
        [sys.executable, "-m", "satchel", "sources", "add", str(notes), "--db", str(db),
         "--agent", "alice"],
        check=True,
    )  # fmt: skip
    params = satchel_stdio("--db", str(db), "--agent", "alice", "--template", "none")
    with anyio.fail_after(120):
        async with Client(params) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"search_files", "grep_files", "open_file"} <= names
            found = _ok(await client.call_tool("search_files", {"query": "when is the MOT"}))
            assert found["results"][0]["file"] == "notes/car.md"
            assert found["results"][0]["lines"] == "1-4"
            grep = _ok(await client.call_tool("grep_files", {"pattern": r"R1\d"}))
            assert grep["matches"] == [
                {"file": "notes/car.md", "line": 4, "text": "Tyres: 205/55 R16."}
            ]

            (notes / "bike.md").write_text("The bike chain was oiled on Sunday.\n")
            while True:  # the watch indexes it in its own time; no fixed wait
                hits = _ok(await client.call_tool("search_files", {"query": "bike chain oiled"}))
                if any(r["file"] == "notes/bike.md" for r in hits["results"]):
                    break
                await anyio.sleep(0.2)
            mixed = _ok(await client.call_tool("search", {"query": "bike chain oiled"}))
            assert any(
                r["domain"] == "files" and r["label"].startswith("notes/bike.md:")
                for r in mixed["results"]
            )


async def test_without_sources_serve_offers_no_file_tools(tmp_path: Path) -> None:
    params = satchel_stdio("--db", str(tmp_path / "m.db"), "--agent", "alice", "--template", "none")
    with anyio.fail_after(120):
        async with Client(params) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
    assert "search_files" not in names
    assert "search" in names
