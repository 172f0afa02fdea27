"""Search over the lines of an agent's core and working blocks.

A fact the agent appended to ``human`` must be a hit for the question it answers, named
by its block. These blocks are ranked line by line, at search time, outside the
backend: each line is a candidate scored exactly as hybrid fusion scores an entry
(:mod:`satchel.retrieval._hybrid`: the share of the query's IDF mass the line's words
cover, plus its cosine to the query), and each block contributes its best line.

Why lines, and why at search time:

* Ranked as whole blocks (one vector and one full-text row per block, as archival
  entries are), a ``human`` block of a dozen facts is close to no question: its vector
  is the mean of unrelated facts, and BM25 divides its matches by its length. In
  ``bench/lived_memory.py`` the block was never among the first three hits.
* Core and working blocks are few and short (each has a character limit), so reading
  them on every search costs one small query; their lines' vectors are cached by text,
  so a line is embedded once per process, and nothing has to be kept in step with
  block writes: every search reads the values as they are now (append, replace, set,
  kind change and delete need no index upkeep, on any backend).
* Coverage fusion scores on a fixed scale (coverage and cosine are both in [0, 1]),
  so a line's score is comparable with the backend's hits and the two lists merge by
  score. The IDF weights come from the lines themselves (a word in every line weighs
  nothing), the nearest stand-in for the store's statistics.

The whole value is not returned: it is in the agent's context already, and the line is
what answers the question.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from satchel.memory._embedding import EmbedBatcher
from satchel.memory._models import Block, SearchFilters, SearchHit, SearchMode
from satchel.retrieval import term_coverage, tokenize

__all__ = ["ContextLines"]

F32 = npt.NDArray[np.float32]

_CACHE = 4096
"""Line vectors kept per store (a few MB at 384 dimensions)."""


class ContextLines:
    """Ranks the lines of core and working blocks for one store, caching line vectors."""

    def __init__(self) -> None:
        self._vectors: OrderedDict[str, F32] = OrderedDict()

    async def _embed(self, batcher: EmbedBatcher, lines: Sequence[str]) -> dict[str, F32]:
        missing = [line for line in dict.fromkeys(lines) if line not in self._vectors]
        if missing:
            for line, row in zip(missing, await batcher.embed(missing), strict=True):
                self._vectors[line] = row
        out: dict[str, F32] = {}
        for line in lines:
            self._vectors.move_to_end(line)
            out[line] = self._vectors[line]
        while len(self._vectors) > _CACHE:
            self._vectors.popitem(last=False)
        return out

    async def search(
        self,
        agent: str,
        blocks: Sequence[Block],
        query: str,
        query_vector: F32 | None,
        batcher: EmbedBatcher | None,
        *,
        filters: SearchFilters,
        mode: SearchMode,
        vector_weight: float,
    ) -> list[SearchHit]:
        """Each of ``blocks``' best line for ``query``, as ``core_memory`` hits.

        A line is a candidate when it shares a query word (``hybrid``, ``bm25``) or has
        a vector (``hybrid``, ``vector``). Scores: ``hybrid`` as the fusion scores,
        ``vector`` the cosine, ``bm25`` the coverage. Blocks the filters rule out
        (labels, tags, time) are skipped. ``vector_weight`` is the fusion's.
        """
        kept = [b for b in blocks if _passes(b, agent, filters)]
        lines = [(b, line) for b in kept for line in _lines(b.value)]
        if not lines:
            return []
        wanted = list(dict.fromkeys(tokenize(query)))
        words = [set(tokenize(line)) for _, line in lines]
        frequency = {t: float(sum(t in w for w in words)) for t in wanted}
        matched = {i: [t for t in wanted if t in w] for i, w in enumerate(words)}
        cover = term_coverage(matched, frequency, float(len(lines))) if wanted else {}
        cosine: dict[int, float] = {}
        if mode != "bm25" and query_vector is not None and batcher is not None:
            vectors = await self._embed(batcher, [line for _, line in lines])
            for i, (_, line) in enumerate(lines):
                cosine[i] = float(np.dot(vectors[line], query_vector))
        best: dict[str, SearchHit] = {}
        w = vector_weight
        for i, (block, line) in enumerate(lines):
            c, v = cover.get(i, 0.0), cosine.get(i)
            match mode:
                case "bm25":
                    if not matched.get(i):
                        continue
                    score = c
                case "vector":
                    if v is None:
                        continue
                    score = v
                case "hybrid":
                    if v is None and not matched.get(i):
                        continue
                    score = (1 - w) * c + w * (v or 0.0)
            found = best.get(block.id)
            if found is not None and found.score >= score:
                continue
            best[block.id] = SearchHit(
                domain="core_memory",
                id=block.id,
                label=block.address_for(agent),
                owner=block.agent,
                text=line,
                score=score,
                created_at=block.created_at,
                tags=block.tags,
                metadata=block.metadata,
                kind=block.kind,
                coverage=c if wanted else None,
                vector_score=v,
            )
        return sorted(best.values(), key=lambda h: -h.score)


def _lines(value: str) -> list[str]:
    return list(dict.fromkeys(line.strip() for line in value.splitlines() if line.strip()))


def _passes(block: Block, agent: str, filters: SearchFilters) -> bool:
    if filters.labels and not (
        block.label in filters.labels or block.address_for(agent) in filters.labels
    ):
        return False
    if filters.tags:
        have = set(block.tags)
        wanted = set(filters.tags)
        if filters.tags_match == "all" and not wanted <= have:
            return False
        if filters.tags_match == "any" and not wanted & have:
            return False
    if filters.start_time is not None and block.created_at < filters.start_time:
        return False
    return filters.end_time is None or block.created_at <= filters.end_time
