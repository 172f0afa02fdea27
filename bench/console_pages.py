"""Page loads of the memory console at scale: a store with ``--blocks`` core and
working blocks (one agent holding them all: the agent page's worst case) and
``--archival`` archival entries, 50 loads of each page.

Each page is timed as an HTTP request through the console's ASGI app (httpx's
``ASGITransport``: routing, the login gate, the store calls, Jinja rendering; no
socket), and against its baseline measured in the same run: the raw store call(s) the
page renders from. The figure is page p50 / baseline p50.

Search runs BM25-only (``embedder=None``): embedding 100,000 entries here would take
longer than the benchmark; the ratio is about rendering, not ranking.

Run:
    uv run python bench/console_pages.py [--blocks 10000] [--archival 100000] [--loads 50]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx

from satchel.consent import ConsentScope, PermissionBroker, SQLiteApprovalStore
from satchel.console import console_app
from satchel.memory import Block, BlockKind, SQLiteStore

WORDS = [
    *("tea", "kyoto", "cello", "porto", "sister", "garden", "python", "coral", "reef"),
    *("ocean", "train", "museum", "birthday", "recipe", "bread", "running", "marathon"),
    *("violin", "novel", "chess", "winter", "summer"),
]


def _text(n: int) -> str:
    picked = [WORDS[(n * 7 + i * 3) % len(WORDS)] for i in range(12)]
    return f"Entry {n}: " + " ".join(picked) + "."


def _records(agent: str, count: int, kind: BlockKind, prefix: str) -> list[Block]:
    now = datetime.now(UTC)
    return [
        Block(
            id=uuid.uuid4().hex,
            agent=agent,
            label=f"{prefix}{n:06d}",
            value=_text(n),
            description=f"{prefix} number {n}",
            kind=kind,
            char_limit=200 if kind is not BlockKind.ARCHIVAL else None,
            created_at=now - timedelta(seconds=count - n),
            updated_at=now - timedelta(seconds=count - n),
        )
        for n in range(count)
    ]


async def _p50(run: Callable[[], Awaitable[Any]], loads: int) -> float:
    await run()  # warm
    times: list[float] = []
    for _ in range(loads):
        start = time.perf_counter()
        await run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


async def main(blocks: int, archival: int, loads: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.db"
        store = await SQLiteStore.open(db, embedder=None)
        start = time.perf_counter()
        kinds = [BlockKind.CORE if n % 2 else BlockKind.WORKING for n in range(blocks)]
        context = _records("big", blocks, BlockKind.CORE, "block")
        context = [b.model_copy(update={"kind": k}) for b, k in zip(context, kinds, strict=True)]
        await store.import_records(context)
        await store.import_records(_records("big", archival, BlockKind.ARCHIVAL, "entry"))
        for n in range(20):
            await store.create_block(f"agent{n:02d}", "persona", _text(n))
        for n in range(10):
            await store.update_block_text("big", "block000001", _text(n + 1000))
        print(f"filled in {time.perf_counter() - start:.1f} s: {blocks} blocks, {archival} entries")
        broker = PermissionBroker(SQLiteApprovalStore(db))
        for n in range(20):
            scope = ConsentScope.tool_execution("delete_file", {"path": f"f{n}"}, agent="big")
            await broker.request(scope, "delete", "mcp", arguments={"path": f"f{n}"}, wait=False)
        app = console_app(store, broker)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:

            def page(path: str) -> Callable[[], Awaitable[Any]]:
                async def load() -> None:
                    response = await client.get(path)
                    assert response.status_code == 200, (path, response.status_code)

                return load

            async def agents() -> None:
                await store.describe_agents()

            in_context = [BlockKind.CORE, BlockKind.WORKING]

            middle = max(1, blocks // 200)

            async def agent_page() -> None:
                await store.describe_agents("big")
                await store.list_blocks_page("big", kinds=in_context, limit=100)

            async def agent_page_middle() -> None:
                await store.describe_agents("big")
                await store.list_blocks_page(
                    "big", kinds=in_context, offset=(middle - 1) * 100, limit=100
                )

            async def agent_page_unpaged() -> None:  # what the page read before paging
                await store.describe_agents("big")
                await store.list_blocks("big", kinds=in_context)

            async def block_page() -> None:
                await store.describe_agents("big")
                await store.get_block("big", "block000001")
                await store.block_history("big", "block000001")

            async def search() -> None:
                await store.describe_agents("big")
                await store.search("big", "kyoto cello garden", limit=21)

            async def approvals() -> None:
                await broker.list()

            cases = [
                ("agents list", "/agents", agents),
                (f"agent page ({blocks} blocks)", "/agents/big", agent_page),
                ("  vs the unpaged read (list_blocks)", "/agents/big", agent_page_unpaged),
                (
                    f"  page {blocks // 200} (the middle)",
                    f"/agents/big?page={blocks // 200}",
                    agent_page,
                ),
                ("block page (+ history, diff)", "/agents/big/blocks/block000001", block_page),
                (
                    f"search ({archival} entries)",
                    "/agents/big/search?q=kyoto+cello+garden&domain=archival",
                    search,
                ),
                ("approvals inbox (20 pending)", "/approvals", approvals),
            ]
            print(f"\n{'page':40} {'page p50 ms':>12} {'store p50 ms':>13} {'ratio':>7}")
            for name, path, baseline in cases:
                base = await _p50(baseline, loads)
                shown = await _p50(page(path), loads)
                print(f"{name:40} {shown:12.2f} {base:13.2f} {shown / base:7.2f}")
        await broker.close()
        await store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=10_000)
    parser.add_argument("--archival", type=int, default=100_000)
    parser.add_argument("--loads", type=int, default=50)
    args = parser.parse_args()
    anyio.run(main, args.blocks, args.archival, args.loads)
