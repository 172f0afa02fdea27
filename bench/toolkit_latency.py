"""Latency of ``list_calendar_events`` over a large calendar: 5,000 local events, and
the same on a real Radicale server. A script, not a test.

The calendar holds ``--events`` events over a year (one in ten repeats weekly). Each
round lists one week through the tool (``registry.call``: argument checks, date
reading, the store, expansion of repeats, the output model). Baselines measured in the
same run:

* local: ``recurring-ical-events`` expanding the same week over all the same events,
  already parsed in memory (what a store without an index pays at best);
* Radicale: one bare ``caldav`` time-range search of the same week (the server's own
  cost, with no expansion).

Run:  uv run python bench/toolkit_latency.py [--events 5000] [--rounds 15] [--radicale-events 5000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import anyio
import anyio.to_thread
import httpx
import icalendar
import recurring_ical_events  # pyright: ignore[reportMissingTypeStubs]

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from radicale_server import running_radicale
from satchel import ToolRegistry
from satchel.toolkit import ToolkitConfig
from satchel.toolkit._calendar_model import open_calendar_store
from satchel.toolkit._calendar_tools import calendar_tools
from satchel.toolkit._ical_store import CalendarStore, put, wrap

ZONE = ZoneInfo("Europe/Paris")
NOW = datetime(2026, 6, 1, 9, tzinfo=ZONE)
WEEK = (datetime(2026, 6, 8, tzinfo=ZONE), datetime(2026, 6, 15, tzinfo=ZONE))


def events(n: int) -> list[icalendar.Component]:
    rng = random.Random(0)
    made: list[icalendar.Component] = []
    for i in range(n):
        start = datetime(2026, 1, 1, tzinfo=ZONE) + timedelta(
            days=rng.randrange(365), hours=rng.randrange(8, 19)
        )
        event = icalendar.Event()
        put(event, "UID", str(uuid.UUID(int=rng.getrandbits(128))))
        put(event, "DTSTAMP", NOW)
        put(event, "SUMMARY", f"Event {i} with someone")
        put(event, "DTSTART", start)
        put(event, "DTEND", start + timedelta(minutes=rng.choice((30, 60, 90))))
        if i % 10 == 0:
            put(event, "RRULE", icalendar.vRecur.from_ical("FREQ=WEEKLY;COUNT=20"))
        made.append(event)
    return made


async def timed(call: Callable[[], Awaitable[Any]], rounds: int) -> tuple[float, float]:
    """(first call ms, median ms of the next ``rounds``)."""
    start = time.perf_counter()
    await call()
    first = (time.perf_counter() - start) * 1000
    samples: list[float] = []
    for _ in range(rounds):
        start = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - start) * 1000)
    return first, statistics.median(samples)


def tool_call(tools: ToolRegistry) -> Callable[[], Awaitable[int]]:
    async def call() -> int:
        result = await tools.call(
            "list_calendar_events",
            {"time_min": "2026-06-08", "time_max": "2026-06-14", "max_results": 500},
        )
        assert result.error is None, result.error
        return len(result.output.events)  # type: ignore[union-attr]

    return call


async def measure(
    label: str,
    store: CalendarStore,
    config: ToolkitConfig,
    baseline: Callable[[], Any],
    rounds: int,
) -> None:
    tools = ToolRegistry(calendar_tools(config, store=store, now=lambda: NOW))
    count = await tool_call(tools)()
    base_first, base = await timed(lambda: anyio.to_thread.run_sync(baseline), rounds)
    first, median = await timed(tool_call(tools), rounds)
    print(f"\n## {label}: {count} occurrences in the week")
    print(f"   {'':<34} {'first ms':>9} {'median ms':>10} {'x baseline':>11}")
    print(f"   {'baseline':<34} {base_first:>9.1f} {base:>10.1f} {1:>10.2f}x")
    print(
        f"   {'list_calendar_events (tool)':<34} {first:>9.1f} {median:>10.1f} "
        f"{median / base:>10.2f}x"
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--radicale-events", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()

    made = events(args.events)
    root = Path(tempfile.mkdtemp(prefix="satchel-cal-bench-"))
    config = ToolkitConfig(data_dir=root, timezone="Europe/Paris")
    local = open_calendar_store(config)
    start = time.perf_counter()
    for event in made:
        local.save("event", event)
    print(f"wrote {len(made)} local events in {time.perf_counter() - start:.1f} s")
    everything = icalendar.Calendar()
    for event in made:
        everything.add_component(event)

    def unindexed() -> list[Any]:
        query: Any = recurring_ical_events.of(everything)  # pyright: ignore[reportUnknownMemberType]
        return list(query.between(*WEEK))

    await measure("local .ics folder", local, config, unindexed, args.rounds)
    for label, drop_index in (("with its index", False), ("with no index (parses all)", True)):
        if drop_index:
            (root / "calendar" / "events" / ".satchel-index.json").unlink()
        fresh = open_calendar_store(config)  # as a new process would
        start = time.perf_counter()
        fresh.between(*WEEK)
        ms = (time.perf_counter() - start) * 1000
        print(f"   a new process's first listing, {label}: {ms:.0f} ms")

    remote_events = made[: args.radicale_events]
    storage = root / "radicale"
    with running_radicale(storage) as url:
        remote = ToolkitConfig(
            data_dir=root,
            timezone="Europe/Paris",
            calendar_url=url,
            calendar_username="bench",
            calendar_password="x",  # pyright: ignore[reportArgumentType]
            calendar_name="bench",
        )
        store = open_calendar_store(remote)
        start = time.perf_counter()
        for event in remote_events[:100]:  # through CalDAV, to time an upload
            store.save("event", event, new=True)
        took = (time.perf_counter() - start) * 1000 / min(100, len(remote_events))
        # the rest straight into Radicale's folder (uploading 5,000 takes minutes)
        calendar: Any = store._calendar("event")  # pyright: ignore[reportPrivateUsage,reportAttributeAccessIssue]
        folder = storage / "collection-root" / str(calendar.url.path).strip("/")
        for event in remote_events[100:]:
            (folder / f"{event['UID']}.ics").write_bytes(wrap(event).to_ical())
        # Radicale reads the files it did not write once, on first use: do that here
        await anyio.to_thread.run_sync(
            lambda: httpx.request(
                "PROPFIND", str(calendar.url), headers={"Depth": "1"}, timeout=900
            )
        )
        print(f"\nRadicale: {len(remote_events)} events ({took:.0f} ms per CalDAV upload)")
        await measure(
            "Radicale (CalDAV)",
            store,
            remote,
            lambda: calendar.search(start=WEEK[0], end=WEEK[1], event=True, expand=False),
            args.rounds,
        )
        store.close()


if __name__ == "__main__":
    anyio.run(main)
