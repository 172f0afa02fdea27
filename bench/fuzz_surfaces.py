"""The toolkit, the meta-tools and chains in ``fuzz_soak.py``: library and serve paths.

Three surfaces, each fuzzed with :class:`fuzz_cases.CaseMaker` cases from the tool's own
input schema:

* **toolkit**: every tool of :func:`satchel.toolkit.productivity_toolkit` (calendar and
  tasks on the local iCalendar files, mail on the local Maildir with no SMTP or IMAP
  configured, reminders and tracked tasks in a SQLite memory store);
* **chains**: the chains of :data:`CHAINS` (``satchel.compose``) over those tools: ids
  passed on, a condition, a fallback, a fan-out over a list;
* **meta**: ``discover_tools``, ``get_tool_schema`` and ``invoke_tool`` over GitHub's
  MCP catalog plus the toolkit (``invoke_tool`` gets a catalog tool's name and
  arguments drawn from that tool's schema).

Each case goes three ways: ``ToolRegistry.call`` (**library**); ``tools/call`` from the
official MCP client (``stdio_client`` + ``ClientSession``) to a real ``satchel serve``
process (**serve**); and, for one case in ten and for every case the client cannot
encode (a lone surrogate), a raw JSON-RPC line to a second server process, sometimes
made malformed on purpose: ``NaN`` literals, cut short, bytes that are not UTF-8,
arguments that are not an object (**serve, raw frames**).
"""

from __future__ import annotations

import json
import math
import os
import random
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import anyio
import pydantic_core
from fuzz_cases import CaseMaker
from fuzz_catalog import catalog
from fuzz_wire import SATCHEL, Server, Shown, Tally, encode
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

from satchel import ToolRegistry, ToolResult
from satchel.compose import load_chains
from satchel.memory import SQLiteStore
from satchel.meta import MetaTools
from satchel.toolkit import ToolkitConfig, productivity_toolkit
from satchel.tools import ToolContext

__all__ = ["CHAINS", "SURFACES", "soak_surfaces"]

SURFACES = ("toolkit", "chains", "meta")
_TIMEOUT = 60.0
_BENCH = str(Path(__file__).parent)

CHAINS: dict[str, Any] = {
    "chains": [
        {
            "name": "task_done",
            "description": "Create a task, mark it done, then list the done tasks.",
            "steps": [
                "create_task",
                {"tool": "mark_task_complete", "map": {"task_id": "task_id"}},
                {
                    "tool": "list_tasks",
                    "when": "status == 'completed'",
                    "map": {"show_completed": "`true`"},
                    "on_error": "skip",
                },
            ],
        },
        {
            "name": "clear_events",
            "description": "Delete each of the given events.",
            "steps": [
                {
                    "tool": "delete_calendar_event",
                    "over": "event_id",
                    "max_items": 20,
                    "on_error": "skip",
                }
            ],
        },
        {
            "name": "event_and_mail",
            "description": "Add an event, then mail its title.",
            "steps": [
                "add_calendar_event",
                {
                    "tool": "send_email",
                    "map": {"subject": "title"},
                    "when": "all_day == `false`",
                },
            ],
        },
        {
            "name": "find_event",
            "description": "Search events; list them when the search fails.",
            "steps": [
                {"tool": "search_calendar_events", "on_error": {"fallback": "list_calendar_events"}}
            ],
        },
    ]
}


def _env(tmp: Path, name: str) -> dict[str, str]:
    env = {
        **os.environ,
        "SATCHEL_LOG_LEVEL": "error",
        "XDG_DATA_HOME": str(tmp / f"{name}-xdg-data"),
        "XDG_CONFIG_HOME": str(tmp / f"{name}-xdg-config"),
        "SATCHEL_DATA_DIR": str(tmp / f"{name}-toolkit"),
        "PYTHONPATH": os.pathsep.join(p for p in (_BENCH, os.environ.get("PYTHONPATH")) if p),
    }
    for unset in ("SATCHEL_CALENDAR_URL", "SATCHEL_TIMEZONE", "SATCHEL_TOOLKIT_CONFIG"):
        env.pop(unset, None)
    for key in list(env):
        if key.startswith(("SATCHEL_SMTP", "SATCHEL_IMAP", "SATCHEL_MAIL")):
            env.pop(key)
    return env


def _serve_args(surface: str, tmp: Path, name: str, chains: Path) -> list[str]:
    args = ["serve", "--db", str(tmp / f"{name}.db"), "--agent", "ada", "--consent-wait", "0"]
    args += ["--toolkit", "productivity", "--timezone", "UTC"]
    if surface == "meta":
        return [*args, "--lazy", "--no-learn", "--tools", "fuzz_catalog:catalog", "--no-memory"]
    return [*args, "--chains", str(chains), "--approve", "none", "--no-memory"]


@asynccontextmanager
async def _sdk_session(params: StdioServerParameters, log: TextIO) -> AsyncIterator[ClientSession]:
    """A ``satchel serve`` process spoken to by the official MCP client."""
    async with (
        stdio_client(params, errlog=log) as (read, write),
        ClientSession(read, write) as session,
    ):
        with anyio.fail_after(180):
            await session.initialize()
        yield session


def _malformed(rng: random.Random, tool: str, args: Any, ident: int) -> tuple[bytes, str]:
    """One raw ``tools/call`` line, perhaps broken on purpose, and how it was broken."""
    frame = {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "tools/call",
        "params": {"name": tool, "arguments": args},
    }
    text = encode(frame)
    how = rng.randrange(8)
    if how == 1:
        return text[: rng.randrange(1, max(2, len(text)))].encode("utf-8", "surrogatepass"), "cut"
    if how == 2:
        raw = text.encode("utf-8", "surrogatepass")
        at = rng.randrange(len(raw))
        return raw[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"]) + raw[at:], (
            "bytes"
        )
    if how == 3:
        frame["params"]["arguments"] = rng.choice([[args], "args", 5, None, math.nan])
        return encode(frame).encode(), "arguments not an object"
    if how == 4:
        tail = text[text.index('"arguments"') :]
        return f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call","params":{{'.encode() + (
            f'"name":{json.dumps(tool)},"name":"x",{tail}'.encode("utf-8", "surrogatepass")
        ), "duplicate key"
    if how == 5:
        return text.replace('"arguments":', '"arguments":{"x":NaN,"y":-Infinity},"a":', 1).encode(
            "utf-8", "surrogatepass"
        ), "NaN"
    return text.encode("utf-8", "surrogatepass"), "whole"


@dataclass(kw_only=True)
class _ToolRun:
    """One tool's cases: each through the library, the client and now and then raw."""

    tool: str
    schema: dict[str, Any]
    registry: ToolRegistry
    ctx: ToolContext
    maker: CaseMaker
    catalog_schemas: dict[str, dict[str, Any]]
    raw: Server | None
    library: Tally
    serve: Tally
    wire: Tally
    last: Shown | None = None
    ident: int = 10_000

    async def one(self, session: ClientSession | None) -> None:
        """Draw one case and send it every way."""
        rng = self.maker.rng
        kind, args = self.maker.case(self.schema)
        if self.tool == "invoke_tool" and kind == "valid" and rng.random() < 0.8:
            target = rng.choice(list(self.catalog_schemas))
            args = {
                "tool_name": target,
                "parameters": self.maker.valid(self.catalog_schemas[target]),
            }
        example = self.last = Shown(self.tool, args)
        self.library.counts["cases"] += 1
        try:
            with anyio.fail_after(_TIMEOUT):
                result = await self.registry.call(self.tool, args, self.ctx)
        except Exception as exc:  # counted, not raised: this is the finding
            self.library.note("uncaught exceptions", example, repr(exc))
        else:
            _library_check(result, self.library, example)
            if result.ok:
                self.maker.remember(result.output)
        if session is None:
            return
        encoded = await _via_sdk(session, self.tool, args, self.serve, example)
        if not encoded:
            self.serve.counts["not encodable by the client"] += 1
        if self.raw is not None and (not encoded or rng.random() < 0.1):
            self.ident += 1
            _via_raw(self.raw, rng, self.tool, args, self.wire, self.ident)


def _library_check(result: ToolResult, tally: Tally, example: Shown) -> None:
    if result.error is not None and result.error.kind == "internal":
        tally.note("internal results", example, result.error.message)
    try:
        result.to_json()
        result.to_text()
    except Exception as exc:  # counted, not raised: this is the finding
        tally.note("unserialisable results", example, repr(exc))


async def _via_sdk(
    session: ClientSession, tool: str, args: Any, tally: Tally, example: Shown
) -> bool:
    """One case through the MCP client; ``False`` when the client cannot encode it."""
    if not isinstance(args, dict):
        return False  # the client refuses arguments that are not an object
    try:
        pydantic_core.to_json(args)  # what the client's writer does: no lone surrogates
    except (pydantic_core.PydanticSerializationError, ValueError, RecursionError):
        return False
    tally.counts["cases"] += 1
    try:
        with anyio.fail_after(_TIMEOUT):
            result = await session.call_tool(tool, args)
    except MCPError as exc:
        if exc.code == -32603:
            tally.note("uncaught exceptions", example, repr(exc.error))
        else:
            tally.note("protocol errors (not failures)", example, repr(exc.error))
        return True
    meta = (result.meta or {}).get("satchel/error") or {}
    if isinstance(meta, dict) and meta.get("kind") == "internal":  # pyright: ignore[reportUnknownMemberType]
        tally.note("internal results", example, str(meta.get("message", "")))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    try:
        json.loads(result.model_dump_json())
        if not result.content and result.structured_content is None:
            raise ValueError("a result with neither content nor structured content")
    except Exception as exc:  # counted, not raised: this is the finding
        tally.note("unserialisable results", example, repr(exc))
    return True


def _via_raw(
    raw: Server,
    rng: random.Random,
    tool: str,
    args: Any,
    tally: Tally,
    ident: int,
) -> None:
    line, how = _malformed(rng, tool, args, ident)
    tally.counts["cases"] += 1
    example = Shown(f"{tool} ({how})", args)
    try:
        answer = raw.exchange(line, ident)
    except json.JSONDecodeError as exc:
        tally.note("unserialisable results", example, repr(exc))
        return
    if answer is None:
        tally.note("uncaught exceptions", example, "no answer")
        return
    error = answer.get("error")
    if isinstance(error, dict):
        if error.get("code") == -32603:  # pyright: ignore[reportUnknownMemberType]
            tally.note("uncaught exceptions", example, repr(error))  # pyright: ignore[reportUnknownArgumentType]
        else:
            tally.note("protocol errors (not failures)", example, repr(error))  # pyright: ignore[reportUnknownArgumentType]
        return
    result = answer.get("result") or {}
    meta = (result.get("_meta") or {}).get("satchel/error") or {}
    if meta.get("kind") == "internal":
        tally.note("internal results", example, str(meta.get("message", "")))


def _library_registries(tmp: Path, store: SQLiteStore, chains: Path) -> dict[str, ToolRegistry]:
    config = ToolkitConfig(data_dir=tmp / "library-toolkit", timezone="UTC")
    toolkit = productivity_toolkit(config, store=store)
    load_chains(chains, toolkit)
    behind = catalog()
    for tool in productivity_toolkit(config, store=store).tools():
        behind.register(tool)
    meta = MetaTools(behind, embedder=None, learn=False)
    return {"toolkit": toolkit, "chains": toolkit, "meta": meta.registry}


def _tools_of(surface: str, registry: ToolRegistry) -> list[str]:
    chain_names = [c["name"] for c in CHAINS["chains"]]
    if surface == "chains":
        return chain_names
    if surface == "toolkit":
        return [n for n in registry.names() if n not in chain_names]
    return registry.names()


async def soak_surfaces(
    tmp: Path,
    surfaces: list[str],
    cases: int,
    *,
    seed: int,
    serve: bool,
    only: set[str] | None,
    tallies: dict[tuple[str, str], Tally],
) -> dict[str, str]:
    """Fuzz each surface's tools; fill ``tallies[(tool, path)]``; the servers' exits."""
    chains = tmp / "chains.json"
    await anyio.Path(tmp).mkdir(parents=True, exist_ok=True)
    await anyio.Path(chains).write_text(json.dumps(CHAINS), encoding="utf-8")
    store = await SQLiteStore.open(tmp / "library.db", embedder=None)
    registries = _library_registries(tmp, store, chains)
    maker = CaseMaker(random.Random(seed), {})
    maker.seen["tool_name"] = catalog().names()
    catalog_schemas = {s.name: s.input_schema for s in catalog().specs()}
    ctx = ToolContext(agent="ada", origin="fuzz")
    exits: dict[str, str] = {}
    log = (tmp / "serve.log").open("w", encoding="utf-8")
    for name in surfaces:
        registry = registries[name]
        tools = [t for t in _tools_of(name, registry) if only is None or t in only]
        if not tools:
            continue
        params = StdioServerParameters(
            command=SATCHEL,
            args=_serve_args(name, tmp, f"{name}-sdk", chains),
            env=_env(tmp, f"{name}-sdk"),
        )
        raw = None
        if serve:
            raw = Server(
                _serve_args(name, tmp, f"{name}-raw", chains), _env(tmp, f"{name}-raw"), log
            )
        for index, tool in enumerate(tools):
            spec = registry.get(tool)
            assert spec is not None
            run = _ToolRun(
                tool=tool,
                schema=spec.spec.input_schema,
                registry=registry,
                ctx=ctx,
                maker=maker,
                catalog_schemas=catalog_schemas,
                raw=raw,
                library=tallies.setdefault((tool, "library"), Tally()),
                serve=tallies.setdefault((tool, "serve"), Tally()),
                wire=tallies.setdefault((tool, "serve, raw frames"), Tally()),
                ident=(index + 1) * 10_000_000,  # ids unique on the surface's raw server
            )
            started = time.perf_counter()
            left = cases
            while left > 0:
                if not serve:
                    left -= 1
                    await run.one(None)
                    continue
                try:
                    async with _sdk_session(params, log) as session:
                        while left > 0:
                            left -= 1
                            await run.one(session)
                            if left % 1000 == 0 and left:
                                done = cases - left
                                print(f"  {tool}: {done} cases", file=sys.stderr, flush=True)
                except Exception as exc:  # the server died or hung: count it, start another
                    run.serve.note("uncaught exceptions", run.last, f"session ended: {exc!r}")
            took = time.perf_counter() - started
            rows = "; ".join(
                f"{path}: {dict(t.counts)}"
                for path, t in (("library", run.library), ("serve", run.serve), ("raw", run.wire))
            )
            print(f"{tool}: {cases} cases in {took:.0f} s; {rows}", file=sys.stderr, flush=True)
        if raw is not None:
            exits[f"{name} raw server exit code"] = str(raw.close())
    await store.close()
    log.close()
    return exits
