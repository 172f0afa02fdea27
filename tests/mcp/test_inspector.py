"""A real third-party client: the MCP Inspector's CLI (TypeScript SDK) from npm, speaking
the ``initialize`` handshake to ``satchel serve`` over stdio.

Skipped, with the reason, when ``npx`` is missing or the package cannot be fetched
within the time limit.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from .conftest import EXAMPLES, MEMORY_TOOLS

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

INSPECTOR = "@modelcontextprotocol/inspector"
FETCH_LIMIT = 240  # seconds: the first run downloads the package
RUN_LIMIT = 90
_NPM_TROUBLE = ("npm ERR", "npm error", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNRESET", "E404")


async def _inspect(*method: str, limit: float, serve: tuple[str, ...] = ()) -> tuple[int, str, str]:
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is not installed")
    command = [
        npx,
        "-y",
        INSPECTOR,
        "--cli",
        sys.executable,
        "-m",
        "satchel",
        "serve",
        "--tools",
        EXAMPLES,
        *serve,
        *method,
    ]
    with anyio.move_on_after(limit) as scope:
        done = await anyio.run_process(command, check=False, stdin=subprocess.DEVNULL)
    if scope.cancelled_caught:
        pytest.skip(f"the Inspector CLI did not fetch and run within {limit:g} s")
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def _json(out: str) -> Any:
    return json.loads(out[out.index("{") :])


async def test_the_inspector_cli_lists_and_calls_tools() -> None:
    code, out, err = await _inspect("--method", "tools/list", limit=FETCH_LIMIT)
    if code != 0 and any(word in err for word in _NPM_TROUBLE):
        pytest.skip(f"the Inspector could not be fetched from npm: {err.strip()[-300:]}")
    assert code == 0, err
    listed = _json(out)
    by_name = {t["name"]: t for t in listed["tools"]}
    assert set(by_name) == {"word_count", "add", "notes", "echo", *MEMORY_TOOLS}
    assert by_name["add"]["annotations"]["readOnlyHint"] is True

    code, out, err = await _inspect(
        "--method",
        "tools/call",
        "--tool-name",
        "add",
        "--tool-arg",
        "a=40",
        "--tool-arg",
        "b=2",
        limit=RUN_LIMIT,
    )
    assert code == 0, err
    called = _json(out)
    assert called["structuredContent"] == {"result": 42}
    assert called.get("isError", False) is False

    code, out, err = await _inspect(
        "--method", "tools/call", "--tool-name", "notes", "--tool-arg", "operation=read",
        "--tool-arg", "title=missing", limit=RUN_LIMIT,
    )  # fmt: skip
    assert code == 0, err
    failed = _json(out)
    assert failed["isError"] is True
    assert "no note titled 'missing'" in failed["content"][0]["text"]


async def test_the_inspector_cli_lists_prompts_and_resource_templates_and_gets_the_prompt(
    tmp_path: Path,
) -> None:
    serve = ("--db", str(tmp_path / "m.db"), "--agent", "ada")
    code, out, err = await _inspect("--method", "prompts/list", limit=FETCH_LIMIT, serve=serve)
    if code != 0 and any(word in err for word in _NPM_TROUBLE):
        pytest.skip(f"the Inspector could not be fetched from npm: {err.strip()[-300:]}")
    assert code == 0, err
    assert [p["name"] for p in _json(out)["prompts"]] == ["memory"]

    code, out, err = await _inspect(
        "--method", "resources/templates/list", limit=RUN_LIMIT, serve=serve
    )
    assert code == 0, err
    templates = _json(out)["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["memory://{agent}/{label}"]

    code, out, err = await _inspect(
        "--method", "prompts/get", "--prompt-name", "memory", limit=RUN_LIMIT, serve=serve
    )
    assert code == 0, err
    text = _json(out)["messages"][0]["content"]["text"]
    assert '<memory agent="ada">' in text
