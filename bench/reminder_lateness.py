"""Reminder lateness: how long after its time a reminder reaches the notifier, through
the real firing path (``deliver_reminders`` over a ``MemoryAgenda`` on a SQLite memory
store, the loop ``satchel serve`` runs). A script, not a test.

``--reminders`` reminders (default 200) fall due over ``--window`` seconds on the real
clock: most are one-off, ``--repeating`` of them repeat every ``--every`` seconds until
the window ends, so each of those fires several times (every occurrence counts). The
lateness of an occurrence is the moment ``notify`` receives it minus its due time.

Baseline, measured in the same run: the event loop's own timer, ``anyio.sleep`` until
the same due times (what any scheduler built on it pays at best). Figures are p50, p99
and max in milliseconds, and the ratio of the reminders' p50/p99 to the baseline's.

Run:  uv run python bench/reminder_lateness.py [--reminders 200] [--repeating 40]
      [--window 30] [--every 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import anyio

from satchel.memory import SQLiteStore
from satchel.toolkit import MemoryAgenda, Reminder, deliver_reminders

ZONE = ZoneInfo("Europe/Paris")


def _percentiles(values: list[float]) -> tuple[float, float, float]:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return statistics.median(ordered), p99, ordered[-1]


async def _reminders(
    count: int, repeating: int, window: float, every: int, seed: int
) -> tuple[list[float], int, int]:
    """Lateness (s) of every occurrence delivered, the number marked late, and how many
    occurrences were expected but not delivered."""
    rng = random.Random(seed)
    lateness: list[float] = []
    late_marked = 0
    with tempfile.TemporaryDirectory() as tmp:
        store = await SQLiteStore.open(Path(tmp) / "memory.db", embedder=None)
        agenda = MemoryAgenda(store)
        start = datetime.now(UTC) + timedelta(seconds=2)
        end = start + timedelta(seconds=window)
        expected = 0
        for i in range(count):
            offset = rng.uniform(0, window)
            due = start + timedelta(seconds=offset)
            if i < repeating:
                # whole seconds, as a repeating rule keeps them (RRULE has no fractions)
                due = start.replace(microsecond=0) + timedelta(seconds=rng.randrange(1, every))
                rule = f"FREQ=SECONDLY;INTERVAL={every}"
                occurrences = int((end - due).total_seconds() // every) + 1
                expected += occurrences
                await agenda.schedule("ada", f"r{i}", due, ZONE, rule)
            else:
                expected += 1
                await agenda.schedule("ada", f"o{i}", due, ZONE)

        async def notify(agent: str, reminder: Reminder) -> None:
            nonlocal late_marked
            if reminder.due <= end:
                lateness.append((datetime.now(UTC) - reminder.due).total_seconds())
                late_marked += reminder.late

        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: deliver_reminders(agenda, ["ada"], notify=notify))
            await anyio.sleep((end - datetime.now(UTC)).total_seconds() + 2)
            tg.cancel_scope.cancel()
        await store.close()
    return lateness, late_marked, expected - len(lateness)


async def _baseline(count: int, window: float, seed: int) -> list[float]:
    """Lateness (s) of ``anyio.sleep`` until the same kind of due times."""
    rng = random.Random(seed)
    start = time.monotonic() + 2
    targets = sorted(start + rng.uniform(0, window) for _ in range(count))
    lateness: list[float] = []

    async def wait(target: float) -> None:
        await anyio.sleep(target - time.monotonic())
        lateness.append(time.monotonic() - target)

    async with anyio.create_task_group() as tg:
        for target in targets:
            tg.start_soon(wait, target)
    return lateness


def _row(name: str, values: list[float]) -> tuple[float, float]:
    p50, p99, top = _percentiles(values)
    print(
        f"{name:<34} n={len(values):>4}  p50={p50 * 1000:8.2f} ms  "
        f"p99={p99 * 1000:8.2f} ms  max={top * 1000:8.2f} ms"
    )
    return p50, p99


async def main() -> None:
    """Run both measurements and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reminders", type=int, default=200)
    parser.add_argument("--repeating", type=int, default=40)
    parser.add_argument("--window", type=float, default=30.0)
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    base = await _baseline(args.reminders, args.window, args.seed)
    lateness, late, missing = await _reminders(
        args.reminders, args.repeating, args.window, args.every, args.seed
    )
    print(
        f"{args.reminders} reminders ({args.repeating} repeating every {args.every} s) "
        f"over {args.window:g} s, real clock, SQLite"
    )
    b50, b99 = _row("baseline: anyio.sleep to the time", base)
    r50, r99 = _row("reminders: deliver_reminders", lateness)
    print(f"ratio to baseline: p50 x{r50 / b50:.1f}, p99 x{r99 / b99:.1f}")
    print(f"marked late: {late}; occurrences not delivered: {missing}")


if __name__ == "__main__":
    anyio.run(main)
