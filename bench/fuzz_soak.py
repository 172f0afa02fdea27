"""Soak fuzzing of the built-in memory tools, through the library and a real server.

For each built-in tool (``context``, ``recall``, ``search``, ``send_message``) it draws
``--cases`` hostile argument sets (the strategies of ``tests/builtin/fuzz_strategies.py``
with ``hostile=True``: lone surrogates, strings up to a megabyte, values nested
thousands deep, thousands of labels, wrong and unknown fields, pure noise) and sends
each one twice:

* **library**: ``ToolRegistry.call`` on the tools bound to a SQLite store (with the
  local embedder unless ``--no-embedder``), webhook and Discord endpoints pointed at the
  tests' local fake services;
* **serve**: a ``tools/call`` JSON-RPC frame written to the stdin of a real ``satchel
  serve`` process on its own database (raw frames, ASCII-escaped JSON, so a lone
  surrogate reaches the server as ``\\ud800``).

It counts, per tool and path: cases; uncaught exceptions (the library call raised; or
the server answered nothing, died, or answered with JSON-RPC -32603); ``internal``
results; unserialisable results (``to_json()``/``to_text()`` raised, or the server's
line was not JSON). The target for every count but cases is 0. After the run both
databases must pass SQLite's integrity check.

Run:  uv run python bench/fuzz_soak.py [--cases 10000] [--tools context,search]
The CI test ``tests/builtin/test_fuzz.py`` runs the same strategies through the library
with 100 cases per tool (``SATCHEL_FUZZ_EXAMPLES`` raises it).
"""

from __future__ import annotations

import argparse
import functools
import json
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, Phase, given, settings

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).parent))
from fuzz_surfaces import SURFACES, soak_surfaces
from fuzz_wire import Server, Shown, Tally

from builtin.fuzz_strategies import TOOLS, strategies, with_hook
from fake_services import DISCORD_TOKEN, running_services  # the tests' fakes
from satchel.builtin import DiscordEndpoint, MessageRouter, WebhookEndpoint, memory_toolset
from satchel.memory import BlockKind, Permission, SQLiteStore
from satchel.tools import ToolContext

_ANSWER_TIMEOUT = 60.0
_SATCHEL = str(Path(sys.executable).parent / "satchel")


async def _seed(store: SQLiteStore) -> None:
    await store.create_block("ada", "persona", "I am Ada.", char_limit=500)
    await store.create_block("ada", "rules", "Never lie.", permission=Permission.READ_ONLY)
    await store.create_block("ada", "old", "An old note.", kind=BlockKind.ARCHIVAL)
    await store.create_block("bob", "secret", "Bob's secret.")
    await store.create_block("bob", "team", "Team notes.")
    await store.share_block("bob", "team", "ada", Permission.READ_ONLY)


def _via_library(
    portal: BlockingPortal, tools: Any, tool: str, args: dict[str, Any], tally: Tally
) -> None:
    example = Shown(tool, args)
    try:
        result = portal.call(tools.call, tool, args, ToolContext(agent="ada", origin="fuzz"))
    except Exception as exc:  # counted, not raised: this is the finding
        tally.note("uncaught exceptions", example, repr(exc))
        return
    if result.error is not None and result.error.kind == "internal":
        tally.note("internal results", example, result.error.message)
    try:
        result.to_json()
        result.to_text()
    except Exception as exc:  # counted, not raised: this is the finding
        tally.note("unserialisable results", example, repr(exc))


def _via_server(server: Server, tool: str, args: dict[str, Any], tally: Tally) -> None:
    example = Shown(tool, args)
    try:
        answer = server.request("tools/call", {"name": tool, "arguments": args})
    except json.JSONDecodeError as exc:
        tally.note("unserialisable results", example, repr(exc))
        return
    if answer is None:
        tally.note("uncaught exceptions", example, f"no answer (exit {server.proc.poll()})")
        return
    error = answer.get("error")
    if isinstance(error, dict):
        code = error.get("code")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if code == -32603:
            tally.note("uncaught exceptions", example, repr(error))
        else:
            tally.note("protocol errors (not failures)", example, repr(error))
        return
    result = answer.get("result") or {}
    meta = (result.get("_meta") or {}).get("satchel/error") or {}
    if meta.get("kind") == "internal":
        tally.note("internal results", example, str(meta.get("message", "")))


@dataclass
class _Case:
    """Where one tool's cases go."""

    portal: BlockingPortal
    tools: Any
    server: Server | None
    tool: str
    hook: str
    library: Tally
    serve: Tally

    def __call__(self, args: dict[str, Any]) -> None:
        with_hook(args, self.hook)
        self.library.counts["cases"] += 1
        _via_library(self.portal, self.tools, self.tool, args, self.library)
        if self.server is not None:
            self.serve.counts["cases"] += 1
            _via_server(self.server, self.tool, args, self.serve)


def _soak(shape: Any, cases: int, case: _Case) -> None:
    @settings(
        max_examples=cases,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(args=shape)
    def one(args: dict[str, Any]) -> None:
        case(args)

    one()


def _integrity(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def _soak_memory(
    tmp: Path, options: argparse.Namespace, tallies: dict[tuple[str, str], Tally]
) -> dict[str, str]:
    """The built-in memory tools' soak (hypothesis strategies); the integrity checks."""
    chosen = [t for t in TOOLS if options.only is None or t in options.only]
    if not chosen:
        return {}
    shapes = strategies(hostile=True)
    with running_services() as services, start_blocking_portal() as portal:
        lib_db, serve_db = tmp / "library.db", tmp / "serve.db"
        embedder: Any = None
        if not options.no_embedder:
            from satchel.embed import default_embedder

            embedder = default_embedder()
        store = portal.call(lambda: SQLiteStore.open(lib_db, embedder=embedder))
        portal.call(_seed, store)
        router = MessageRouter(store, groups={"team": ["ada", "bob", "cy"]})
        hook = f"{services.base_url}/hooks"
        router.set_endpoint(
            "discord", DiscordEndpoint(DISCORD_TOKEN, base_url=f"{services.base_url}/api/v10")
        )
        router.set_endpoint("webhook", WebhookEndpoint(allowed_urls=[hook]))
        tools = memory_toolset(store, router=router)
        server = None
        if not options.no_serve:
            seeded = portal.call(lambda: SQLiteStore.open(serve_db, embedder=None))
            portal.call(_seed, seeded)
            portal.call(seeded.close)
            server = Server(
                ["serve", "--db", str(serve_db), "--agent", "ada", "--consent-wait", "0"]
            )
        for tool in chosen:
            lib = tallies.setdefault((tool, "library"), Tally())
            srv = tallies.setdefault((tool, "serve"), Tally())
            tool_started = time.perf_counter()
            _soak(shapes[tool], options.cases, _Case(portal, tools, server, tool, hook, lib, srv))
            took = time.perf_counter() - tool_started
            print(f"{tool}: {lib.counts['cases']} cases in {took:.0f} s", file=sys.stderr)
        portal.call(store.close)
        exit_code = server.close() if server is not None else None
        checks = {"memory library db": _integrity(lib_db)}
        if server is not None:
            checks["memory serve db"] = _integrity(serve_db)
            checks["memory serve exit code"] = str(exit_code)
    return checks


def main() -> None:
    sys.setrecursionlimit(50_000)  # json.dumps of values nested 5,000 deep, here and in repr
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=300, help="cases per tool")
    parser.add_argument(
        "--suites",
        default=",".join(("memory", *SURFACES)),
        help="comma-separated: memory, toolkit, chains, meta",
    )
    parser.add_argument("--tools", default="", help="only these tools (comma-separated)")
    parser.add_argument("--seed", type=int, default=28, help="the random cases' seed")
    parser.add_argument("--no-embedder", action="store_true", help="keyword search only")
    parser.add_argument("--no-serve", action="store_true", help="the library path only")
    options = parser.parse_args()
    options.only = {t for t in options.tools.split(",") if t} or None
    suites = [s for s in options.suites.split(",") if s]
    tallies: dict[tuple[str, str], Tally] = {}
    checks: dict[str, str] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="satchel-soak-") as tmp:
        if "memory" in suites:
            checks.update(_soak_memory(Path(tmp), options, tallies))
        surfaces = [s for s in SURFACES if s in suites]
        if surfaces:
            checks.update(
                anyio.run(
                    functools.partial(
                        soak_surfaces,
                        Path(tmp) / "surfaces",
                        surfaces,
                        options.cases,
                        seed=options.seed,
                        serve=not options.no_serve,
                        only=options.only,
                        tallies=tallies,
                    )
                )
            )
    columns = [
        "cases",
        "uncaught exceptions",
        "internal results",
        "unserialisable results",
        "protocol errors (not failures)",
        "not encodable by the client",
    ]
    totals: Counter[str] = Counter()
    for tally in tallies.values():
        totals.update(tally.counts)
    print(f"\nfuzz soak: {time.perf_counter() - started:.0f} s in all")
    print(f"| tool | path | {' | '.join(columns)} |")
    print("|---|---|" + "---|" * len(columns))
    for (tool, path), tally in tallies.items():
        if tally.counts["cases"]:
            row = " | ".join(str(tally.counts[c]) for c in columns)
            print(f"| {tool} | {path} | {row} |")
    row = " | ".join(str(totals[c]) for c in columns)
    print(f"| **all** | **all paths** | {row} |")
    print("\n" + ", ".join(f"{k}: {v}" for k, v in checks.items()))
    for (tool, path), tally in tallies.items():
        for what, example in tally.first.items():
            if what.startswith(("uncaught", "internal", "unserialisable")):
                print(f"first {what} ({tool}, {path}): {example}")


if __name__ == "__main__":
    main()
