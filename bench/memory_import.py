"""Peak memory of ``satchel memory import`` on a large export: streamed vs whole-file.

Writes a synthetic export of ``--mb`` megabytes (archival blocks and messages of about
1.5 kB each, some holding U+2028), then imports it into a fresh SQLite file in a fresh
child process per path, and reports each child's peak resident memory (``ru_maxrss``):

* ``idle``: the child imports satchel and opens the store, nothing more (the floor);
* ``whole file`` (the baseline, what the import did before issue 11): read the whole
  file, parse every line into a list of records, import them as one batch;
* ``streamed`` (now): the CLI's check pass then write pass
  (:func:`satchel.cli._backup.check_export` and
  :func:`~satchel.cli._backup.import_export`), 500 records at a time in one
  transaction.

Embedding is off in every child (``embed=False``): the MiniLM model would take hours
on 100 MB, and its working set is bounded by the batch size either way.

``--single`` measures the other shape (issue 28, item 14): an export holding **one**
block of ``--mb`` MB, imported by the real CLI (``python -m satchel memory import``,
embedding on, as a person runs it) in a child process, whose peak resident memory
(``ru_maxrss`` of ``RUSAGE_CHILDREN``, taken by a wrapper process around the CLI alone)
is printed as a ratio to the file's size. Two texts: ASCII words (1 byte per character
in Python), and the same words with a U+2028 every kilobyte (2 bytes per character in
Python, and a UTF-8 copy for SQLite); the ASCII block also as a Markdown export
(``memory export --format markdown``) imported into a new store. "idle" is the CLI
importing a header-only file.

Run:
    uv run python bench/memory_import.py --mb 113
    uv run python bench/memory_import.py --single --mb 100
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import IO

import anyio

from satchel.cli._backup import check_export, import_export
from satchel.cli._export import read_export
from satchel.memory import Block, BlockKind, Message, SQLiteStore

AGENT = "bench"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = [
    "harbour", "ferry", "compiler", "Kyoto", "tea", "bridge", "river", "lantern", "ledger",
    "orchard", "signal", "copper", "meadow", "quartz", "violin", "saffron", "glacier",
]  # fmt: skip


def _text(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(150, 260))
    if rng.random() < 0.1:
        words.insert(rng.randrange(len(words)), "line\u2028separator")
    return " ".join(words)


def write_export(path: Path, megabytes: float) -> int:
    """A synthetic export of about ``megabytes`` MB; returns its record count."""
    rng = random.Random(11)
    limit = int(megabytes * 1_000_000)
    count = written = 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        header = {"format": "satchel-memory", "version": 1, "agent": AGENT}
        written += out.write(json.dumps(header) + "\n")
        while written < limit:
            moment = T0 + timedelta(seconds=count)
            if count % 3 == 0:
                record = Block(
                    id=f"b{count}", agent=AGENT, label=f"fact {count}", value=_text(rng),
                    kind=BlockKind.ARCHIVAL, tags=("bench",), metadata={"n": count},
                    created_at=moment, updated_at=moment,
                )  # fmt: skip
                line = {"type": "block", "block": record.model_dump(mode="json")}
            else:
                message = Message(
                    id=f"m{count}", agent=AGENT, role="user", content=_text(rng),
                    conversation_id=f"c{count // 50}", created_at=moment,
                )  # fmt: skip
                line = {"type": "message", "message": message.model_dump(mode="json")}
            written += out.write(json.dumps(line, ensure_ascii=False) + "\n")
            count += 1
    return count


async def _whole(store: SQLiteStore, text: str) -> int:
    """The pre-issue-11 import: every line parsed into one list, written as one batch."""
    lines = text.split("\n")  # as str.splitlines did, less its bug
    encoded = (line.encode() for line in lines)
    records = list(read_export(encoded, agent=AGENT))  # type: ignore[arg-type]
    report = await store.import_records(records, batch_size=len(records))
    return report.blocks + report.messages


async def _streamed(store: SQLiteStore, stream: IO[bytes]) -> int:
    """Today's import: the check pass, then the write pass, 500 records at a time."""
    total = check_export(stream, AGENT, show=False)
    report = await import_export(store, stream, AGENT, "error", total, show=False)
    return report.blocks + report.messages


async def _child(database: Path, work: Callable[[SQLiteStore], Awaitable[int]]) -> int:
    async with await SQLiteStore.open(database, embedder=None) as store:
        return await work(store)


async def _idle(store: SQLiteStore) -> int:
    return 0


def child(path: Path, database: Path, mode: str) -> None:
    """Run one path and print its record count, peak RSS (kB) and seconds as JSON."""
    start = time.perf_counter()
    if mode == "idle":
        count = anyio.run(_child, database, _idle)
    elif mode == "whole":
        text = path.read_text(encoding="utf-8")
        count = anyio.run(_child, database, partial(_whole, text=text))
    else:
        with path.open("rb") as stream:
            count = anyio.run(_child, database, partial(_streamed, stream=stream))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"records": count, "peak_kb": peak, "s": time.perf_counter() - start}))


def measure(path: Path, workdir: Path, mode: str) -> dict[str, float]:
    database = workdir / f"{mode}.db"
    output = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path), str(database)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(output)


def write_single(path: Path, megabytes: float, *, wide: bool) -> None:
    """An export of one archival block of about ``megabytes`` MB of text; ``wide`` puts
    a U+2028 in every kilobyte (written as its JSON escape, as the exporter does)."""
    unit = " ".join(WORDS) + " "
    if wide:
        unit = (unit * (1000 // len(unit) + 1))[:999] + "\u2028"
    block = Block(
        id="big", agent=AGENT, label="big", value=unit * int(megabytes * 1e6 // len(unit)),
        kind=BlockKind.ARCHIVAL, created_at=T0, updated_at=T0,
    )  # fmt: skip
    line = json.dumps({"type": "block", "block": block.model_dump(mode="json")}, ensure_ascii=False)
    del block
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write(json.dumps({"format": "satchel-memory", "version": 1, "agent": AGENT}) + "\n")
        out.write(line.replace("\u2028", "\\u2028") + "\n")


def peak_of(command: list[str]) -> None:
    """Run ``command`` and print its peak resident memory (kB) and seconds as JSON:
    this wrapper has no other child, so ``RUSAGE_CHILDREN`` is the command's own."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{command} failed: {done.stderr[-2000:]}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"peak_kb": peak, "s": time.perf_counter() - start}))


def measure_cli(path: Path, database: Path) -> dict[str, float]:
    """Peak memory of ``satchel memory import FILE`` into ``database``, in a child."""
    command = [
        sys.executable, "-m", "satchel", "memory", "import", "--db", str(database),
        "--agent", AGENT, str(path),
    ]  # fmt: skip
    wrapper = [sys.executable, __file__, "--peak-of", *command]
    output = subprocess.run(wrapper, check=True, capture_output=True, text=True).stdout
    return json.loads(output)


def single(megabytes: float) -> None:
    """The ``--single`` table: one large block through the real CLI."""
    print("| text | file MB | peak RSS MB | peak / file size | above idle / file size | s |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        empty = workdir / "empty.jsonl"
        empty.write_text(json.dumps({"format": "satchel-memory", "version": 1, "agent": AGENT}))
        idle = measure_cli(empty, workdir / "idle.db")["peak_kb"] / 1024
        print(f"| idle (header only) | 0 | {idle:.0f} | - | - | - |")
        for name, wide in (("ASCII words", False), ("words + U+2028 every kB", True)):
            path = workdir / f"{name[:5]}.jsonl"
            write_single(path, megabytes, wide=wide)
            size = path.stat().st_size / 2**20
            database = workdir / f"{name[:5]}.db"
            result = measure_cli(path, database)
            peak = result["peak_kb"] / 1024
            print(
                f"| {name} | {size:.0f} | {peak:.0f} | {peak / size:.2f} "
                f"| {(peak - idle) / size:.2f} | {result['s']:.1f} |"
            )
            path.unlink()
            if not wide:  # the same block as a Markdown export, imported into a new store
                folder = workdir / "markdown"
                export = [sys.executable, "-m", "satchel", "memory", "export", "--db"]
                export += [str(database), "--agent", AGENT, "--format", "markdown", str(folder)]
                subprocess.run(export, check=True, capture_output=True)
                size = sum(f.stat().st_size for f in folder.rglob("*.md")) / 2**20
                result = measure_cli(folder, workdir / "markdown.db")
                peak = result["peak_kb"] / 1024
                print(
                    f"| {name}, Markdown folder | {size:.0f} | {peak:.0f} | {peak / size:.2f} "
                    f"| {(peak - idle) / size:.2f} | {result['s']:.1f} |"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description="Peak memory of a large import.")
    parser.add_argument("--mb", type=float, default=113.0, help="export size in MB")
    parser.add_argument("--single", action="store_true", help="one block of --mb MB, via the CLI")
    parser.add_argument("--child", nargs=3, metavar=("MODE", "FILE", "DB"), help=argparse.SUPPRESS)
    parser.add_argument("--peak-of", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peak_of:
        peak_of(args.peak_of)
        return
    if args.child:
        mode, path, database = args.child
        child(Path(path), Path(database), mode)
        return
    if args.single:
        single(args.mb)
        return
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        path = workdir / "export.jsonl"
        records = write_export(path, args.mb)
        size_mb = path.stat().st_size / 1e6
        print(f"export: {size_mb:.1f} MB, {records:,} records")
        results = {mode: measure(path, workdir, mode) for mode in ("idle", "whole", "streamed")}
    idle = results["idle"]["peak_kb"] / 1024
    base = results["whole"]["peak_kb"] / 1024 - idle
    print("| path | peak RSS MB | above idle MB | above idle / file size | × whole file | s |")
    print("|---|---|---|---|---|---|")
    for mode, name in (("idle", "idle"), ("whole", "whole file"), ("streamed", "streamed")):
        peak = results[mode]["peak_kb"] / 1024
        above = peak - idle
        ratio = f"{above / base:.2f}" if mode != "idle" else "-"
        print(
            f"| {name} | {peak:.0f} | {above:.0f} | {above / size_mb:.2f} | {ratio} "
            f"| {results[mode]['s']:.1f} |"
        )


if __name__ == "__main__":
    main()
