"""The HNSW index's one-time build against its ``expansion_add`` (ef_construction).

Builds a usearch index (cos, M=16, the store's settings otherwise) over N vectors of
``memory_scale``'s clustered distribution once per setting, in one run, with every
core, and reports build time and recall@10 against exact search for 200 queries asked
for ``k = 82`` rows (what the store asks for: 50 candidates + 32) and cut to 10.

Run:
    uv run python bench/hnsw_build.py --size 100000 --settings f16:64,f16:128
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from memory_scale import ClusteredEmbedder, TextMaker
from usearch.index import Index


def main(size: int, settings: list[str], n_queries: int = 200) -> None:
    vectors = ClusteredEmbedder().embed(TextMaker(seed=size).texts(size + n_queries))
    data, queries = vectors[:size], vectors[size:]
    exact = np.argpartition(-(queries @ data.T), 10, axis=1)[:, :10]
    keys = np.arange(size, dtype=np.uint64)
    for setting in settings:
        dtype, expansion = setting.split(":")
        index = Index(
            ndim=data.shape[1],
            metric="cos",
            dtype=dtype,
            connectivity=16,
            expansion_add=int(expansion),
            expansion_search=64,
        )
        started = time.perf_counter()
        index.add(keys, data, threads=0)
        built = time.perf_counter() - started
        found = index.search(queries, 82, threads=1).keys
        hits = sum(
            len(set(found[i][:10].tolist()) & set(exact[i].tolist())) for i in range(n_queries)
        )
        print(
            f"{setting}: build {built:.1f} s ({size / built:,.0f}/s), "
            f"recall@10 {hits / (10 * n_queries):.3f}",
            flush=True,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--settings", default="f16:64,f16:128")
    args = parser.parse_args()
    main(args.size, args.settings.split(","))
