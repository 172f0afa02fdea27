"""Re-embedding through a provider (issue 31 item 3): ``store.reembed()`` of the same
memory with the bundled MiniLM (the baseline, measured in the same run) and with
``openai:MODEL`` against a local server speaking OpenAI's embeddings wire format
(``tests/embed/fake_embeddings.py``: hashed bag of words, so the server's own work is
near nothing and what is measured is satchel's side of the provider path: the official
SDK, HTTP and JSON on loopback, storing the vectors). Also the latency of one search
whose query is embedded either way.

A real provider adds its model's time and the network's; these figures are the floor
satchel puts under them.

Run:
    uv run python bench/embed_provider.py --texts 2000
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from satchel.embed import OpenAIEmbedder, default_embedder
from satchel.memory import BlockKind, SQLiteStore

_TESTS = Path(__file__).resolve().parents[1] / "tests"


def _load(name: str, relative: str) -> Any:
    """A test helper module by its file (``bench/embed.py`` shadows ``tests/embed``)."""
    spec = importlib.util.spec_from_file_location(name, _TESTS / relative)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


serving = _load("fake_openai", "agent/fake_openai.py").serving
FakeEmbeddings = _load("fake_embeddings", "embed/fake_embeddings.py").FakeEmbeddings

WORDS = [
    "harbour", "ferry", "compiler", "Kyoto", "tea", "bridge", "river", "lantern", "ledger",
    "orchard", "signal", "copper", "meadow", "quartz", "violin", "saffron", "glacier",
]  # fmt: skip


def _text(i: int) -> str:
    words = [WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(12 + i % 20)]
    return f"note {i}: " + " ".join(words)


async def _fill(path: Path, texts: int) -> None:
    async with SQLiteStore(path, embedder=None) as store:
        for i in range(texts):
            await store.create_block("bench", f"n{i}", _text(i), kind=BlockKind.ARCHIVAL)


async def _measure(path: Path, embedder: Any, queries: int) -> tuple[float, float]:
    """Seconds of a whole re-embed, and the median seconds of one hybrid search."""
    async with SQLiteStore(path, embedder=embedder) as store:
        await store.search("bench", "warm up the model")
        start = time.perf_counter()
        await store.reembed(batch_size=64)
        total = time.perf_counter() - start
        times: list[float] = []
        for i in range(queries):
            start = time.perf_counter()
            await store.search("bench", f"{WORDS[i % len(WORDS)]} by the river {i}")
            times.append(time.perf_counter() - start)
        return total, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args()
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        for name in ("minilm", "provider-384", "provider-1536"):
            path = base / f"{name}.db"
            anyio.run(_fill, path, args.texts)
            if name == "minilm":
                embedder: Any = default_embedder()
                total, search = anyio.run(_measure, path, embedder, args.queries)
            else:
                dim = int(name.rsplit("-", 1)[1])
                fake = FakeEmbeddings(dim=dim)
                with serving(fake) as url:
                    embedder = OpenAIEmbedder("fake-embed", base_url=url)
                    total, search = anyio.run(_measure, path, embedder, args.queries)
            rows.append((name, total, search))
    base_rate = args.texts / rows[0][1]
    print(f"{args.texts} texts, {args.queries} searches\n")
    print("| embedder | re-embed texts/s | × MiniLM | search median ms |")
    print("|---|---|---|---|")
    for name, total, search in rows:
        rate = args.texts / total
        print(f"| {name} | {rate:,.0f} | {rate / base_rate:.2f} | {search * 1000:.1f} |")


if __name__ == "__main__":
    main()
