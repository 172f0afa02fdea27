"""Chains and tool versions through ``satchel serve --tools`` (a real process) and the
official MCP client, and through a mount of that server."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client

from satchel import ToolRegistry
from satchel.mcp import mount_mcp

from .conftest import HERE, STARTUP, satchel_args, satchel_stdio

pytestmark = pytest.mark.anyio

CHAIN_TOOLS = f"{HERE / 'servers' / 'chain_tools.py'}:registry"

LABEL_TOML = """
[[chains]]
name = "ticket_label"
description = "Label a ticket by its text."
output = ["label", "priority"]

[[chains.steps]]
tool = "fetch_ticket"

[[chains.steps]]
tool = "classify"
map = { text = "fetch_ticket.body" }
"""


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_a_chain_and_versions_are_served_and_called_over_mcp(tmp_path: Path) -> None:
    chains = tmp_path / "chains.toml"
    chains.write_text(LABEL_TOML)
    params = satchel_stdio(
        "--tools", CHAIN_TOOLS, "--chains", str(chains), "--db", str(tmp_path / "m.db")
    )
    with anyio.fail_after(STARTUP * 2):
        async with Client(params, mode="legacy") as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            urgent = await client.call_tool("triage", {"ticket_id": 3})
            normal = await client.call_tool("triage", {"ticket_id": 4})
            missing = await client.call_tool("triage", {})
            labelled = await client.call_tool("ticket_label", {"ticket_id": 3})
            latest = await client.call_tool("convert", {"feet": 10})
            older = await client.call_tool("convert@1", {"feet": 10})

    triage = listed["triage"]
    assert triage.input_schema["required"] == ["ticket_id"]
    assert "only if label == 'urgent'" in (triage.description or "")
    assert urgent.structured_content == {"escalated": "ticket 3 (urgent)"}
    assert normal.structured_content == {"label": "normal"}
    assert missing.is_error is True
    assert missing.meta is not None
    assert missing.meta["satchel/error"]["kind"] == "invalid_arguments"
    assert labelled.structured_content == {"label": "urgent", "priority": 3}
    assert "convert@1" not in listed
    assert listed["convert"].meta == {"satchel/version": "2", "satchel/versions": ["1", "2"]}
    assert latest.structured_content == {"result": 3.048}
    assert older.structured_content == {"result": 120}
    assert older.meta is not None
    assert (
        older.meta["satchel/notice"]
        == "convert@1 is deprecated: use convert@2, which returns metres"
    )
    assert "Notice: convert@1 is deprecated" in _text(older)
    assert latest.meta is None or "satchel/notice" not in latest.meta


async def test_a_mount_keeps_every_served_version_and_the_notice(tmp_path: Path) -> None:
    command, *args = satchel_args("--tools", CHAIN_TOOLS, "--db", str(tmp_path / "m.db"))
    registry = ToolRegistry()
    with anyio.fail_after(STARTUP * 2):
        async with mount_mcp(registry, prefix="inner", command=command, args=args):
            found = registry.get("inner_convert")
            versions = list(registry.versions("inner_convert"))
            latest = await registry.call("inner_convert", {"feet": 10})
            older = await registry.call("inner_convert@1", {"feet": 10})
            chained = await registry.call("inner_triage", {"ticket_id": 1})
            listed = [d["name"] for d in registry.schemas("anthropic")]
            every = [d["name"] for d in registry.schemas("anthropic", versions="all")]
    assert found is not None
    assert found.spec.version == "2"
    assert versions == ["1", "2"]
    assert latest.output == {"result": 3.048}
    assert latest.notice is None
    assert older.output == {"result": 120}
    assert older.notice == "convert@1 is deprecated: use convert@2, which returns metres"
    assert chained.output == {"escalated": "ticket 1 (urgent)"}
    assert listed.count("inner_convert") == 1
    assert "inner_convert_v1" not in listed
    assert "inner_convert_v1" in every


async def test_serve_refuses_a_chain_that_does_not_check_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(LABEL_TOML.replace('"fetch_ticket.body"', '"fetch_ticket.priority"'))
    args = satchel_args(
        "--tools", CHAIN_TOOLS, "--chains", str(bad), "--db", str(tmp_path / "m.db")
    )
    with anyio.fail_after(STARTUP):
        done = await anyio.run_process(args, check=False, input=b"")
    message = done.stderr.decode()
    assert done.returncode == 2
    assert "Chain 'ticket_label': step 'classify', field 'text'" in message
    assert "Traceback" not in message


async def test_a_served_chain_may_use_a_mounted_servers_tools(tmp_path: Path) -> None:
    chains = tmp_path / "chains.toml"
    chains.write_text(
        LABEL_TOML.replace('"fetch_ticket"', '"inner_fetch_ticket"')
        .replace('"classify"', '"inner_classify"')
        .replace('"fetch_ticket.body"', '"inner_fetch_ticket.body"')
    )
    command, *args = satchel_args("--tools", CHAIN_TOOLS, "--db", str(tmp_path / "inner.db"))
    mount = "inner=" + " ".join([command, *args])
    params = satchel_stdio(
        "--mount", mount, "--chains", str(chains), "--no-memory", "--db", str(tmp_path / "m.db")
    )
    with anyio.fail_after(STARTUP * 3):
        async with Client(params, mode="legacy") as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            labelled = await client.call_tool("ticket_label", {"ticket_id": 3})

    assert {"ticket_label", "inner_fetch_ticket", "inner_classify"} <= listed
    assert labelled.structured_content == {"label": "urgent", "priority": 3}


async def test_a_mount_calls_the_version_the_remote_bare_name_calls(tmp_path: Path) -> None:
    module = tmp_path / "pinned_tools.py"
    module.write_text(
        "from satchel import ToolRegistry, tool\n\n"
        '@tool(name="size", version="1")\n'
        "def size_v1(n: int) -> int:\n"
        '    """Size, version 1."""\n'
        "    return n\n\n"
        '@tool(name="size", version="2")\n'
        "def size_v2(n: int) -> int:\n"
        '    """Size, version 2."""\n'
        "    return n * 2\n\n"
        "registry = ToolRegistry([size_v1, size_v2])\n"
        'registry.pin_version("size", "1")\n'
    )
    command, *args = satchel_args(
        "--tools", f"{module}:registry", "--no-memory", "--db", str(tmp_path / "m.db")
    )
    registry = ToolRegistry()
    with anyio.fail_after(STARTUP * 2):
        async with mount_mcp(registry, prefix="inner", command=command, args=args):
            bare = await registry.call("inner_size", {"n": 5})
            newer = await registry.call("inner_size@2", {"n": 5})
            default = registry.default_version("inner_size")
    assert default == "1"
    assert bare.output == {"result": 5}
    assert newer.output == {"result": 10}
