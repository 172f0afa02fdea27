"""Sources: indexing throughput and search latency at 10,000 passages, against memory.

A folder of Markdown notes is built from the LoCoMo conversations in
``../shared/data/locomo`` (each session a note, its turns as lines, cycled with a note
number until the folder holds ``--passages`` passages). Then, in one run and on the
same machine:

- **indexing**: ``SourceIndex.add`` of the folder (walk, read, cut, embed, store) in
  files and passages per second; the baseline is memory itself: the same passages
  written with ``create_block`` as archival blocks of an agent (what an agent writing
  them to archival memory would cost), so the ratio is the price of the file layer;
- **search**: p50/p95 of ``SourceIndex.search`` for LoCoMo's questions, against
  ``store.search`` over the archival copy of the same passages (the ratio is the file
  layer's overhead on top of memory's hybrid search).

Run:
    uv run python bench/sources.py                      # 10,000 passages, MiniLM
    uv run python bench/sources.py --passages 2000 --embedder hash
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
import numpy as np
import numpy.typing as npt

from satchel.memory import BlockKind, Domain, MemoryStore, SQLiteStore
from satchel.memory.sources._chunks import chunk_text
from satchel.sources import SourceIndex

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo.dev.json"


class HashEmbedder:
    """Hashed bag of words, 384 dimensions: isolates storage from model time."""

    name = "bench-hash"
    dim = 384

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % self.dim] += 1.0
            out[row] /= max(float(np.linalg.norm(out[row])), 1e-9)
        return out


def _sessions() -> tuple[list[list[str]], list[str]]:
    data = json.loads(DATA.read_text())
    sessions: list[list[str]] = []
    questions: list[str] = []
    for sample in data:
        talk = sample["conversation"]
        for key, turns in talk.items():
            if re.fullmatch(r"session_\d+", key) and isinstance(turns, list):
                sessions.append([f"{t['speaker']}: {t['text']}" for t in turns])
        questions += [q["question"] for q in sample["qa"] if "question" in q]
    return sessions, questions


def build_folder(folder: Path, passages: int) -> tuple[int, int]:
    """Notes until the folder holds ``passages`` passages; returns (files, passages)."""
    sessions, _ = _sessions()
    files = count = 0
    while count < passages:
        session = sessions[files % len(sessions)]
        text = f"# Note {files}\n\n" + "\n".join(f"{line} (note {files})" for line in session)
        path = folder / f"part{files // 100:03d}" / f"note{files:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
        count += len(chunk_text(text))
        files += 1
    return files, count


async def _open(path: Path, embedder: str) -> MemoryStore:
    if embedder == "hash":
        return await SQLiteStore.open(path, embedder=HashEmbedder())
    from satchel.embed import default_embedder

    return await SQLiteStore.open(path, embedder=default_embedder())


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) > 1 else values[0]


async def main(passages: int, embedder: str, queries: int) -> None:
    _, questions = _sessions()
    asked = questions[:queries]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = root / "notes"
        files, expected = build_folder(folder, passages)
        print(f"{files} notes, {expected} passages, embedder {embedder}")

        store = await _open(root / "sources.db", embedder)
        start = time.perf_counter()
        report = await SourceIndex(store, "ada").add(folder)
        index_s = time.perf_counter() - start
        assert report.chunks == expected, (report.chunks, expected)

        memory = await _open(root / "memory.db", embedder)
        texts = [c.text for p in sorted(folder.rglob("*.md")) for c in chunk_text(p.read_text())]
        start = time.perf_counter()
        for number, text in enumerate(texts):
            await memory.create_block("ada", f"p{number}", text, kind=BlockKind.ARCHIVAL)
        memory_s = time.perf_counter() - start

        index = SourceIndex(store, "ada")
        for q in asked[:5]:  # warm both (vector index load, caches)
            await index.search(q)
            await memory.search("ada", q, domains=Domain.ARCHIVAL_MEMORY)
        source_t: list[float] = []
        memory_t: list[float] = []
        for q in asked:
            t0 = time.perf_counter()
            await index.search(q)
            source_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            await memory.search("ada", q, domains=Domain.ARCHIVAL_MEMORY)
            memory_t.append(time.perf_counter() - t0)
        await store.close()
        await memory.close()

    print(
        f"indexing: {files / index_s:,.1f} files/s, {expected / index_s:,.1f} passages/s "
        f"({index_s:.1f} s); memory create_block of the same passages: "
        f"{expected / memory_s:,.1f} passages/s ({memory_s:.1f} s); "
        f"ratio sources/memory time x{index_s / memory_s:.2f}"
    )
    sp50, sp95 = _p(source_t, 50) * 1000, _p(source_t, 95) * 1000
    mp50, mp95 = _p(memory_t, 50) * 1000, _p(memory_t, 95) * 1000
    print(
        f"search over {expected} passages, {len(asked)} questions: sources p50 {sp50:.1f} ms "
        f"p95 {sp95:.1f} ms; memory p50 {mp50:.1f} ms p95 {mp95:.1f} ms; "
        f"ratio p50 x{sp50 / mp50:.2f}, p95 x{sp95 / mp95:.2f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=10_000)
    parser.add_argument("--embedder", choices=["default", "hash"], default="default")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    anyio.run(main, args.passages, args.embedder, args.queries)
