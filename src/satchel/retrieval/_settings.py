"""Every measured retrieval setting, in one place.

Each constant was chosen by a benchmark under ``bench/``; the comment beside it names
the ``bench/README.md`` section with the figures and the command that reproduces them.
The models that use them (:class:`~satchel.retrieval.HybridFusion` for memory search,
:class:`~satchel.meta.Ranking` for tool search) take them as defaults, so a caller can
still override any of them.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "BM25_B",
    "BM25_K1",
    "HYBRID_CANDIDATES",
    "HYBRID_METHOD",
    "HYBRID_VECTOR_WEIGHT",
    "MAX_QUERY_TERMS",
    "NEIGHBOUR_LEND_SHARE",
    "RELEVANT_COSINE",
    "RELEVANT_COVERAGE",
    "RRF_K",
    "TOOL_BM25_WEIGHT",
    "TOOL_DESCRIPTION_WEIGHT",
    "TOOL_EXAMPLE_WEIGHT",
    "TOOL_NAME_REPEAT",
    "TOOL_NAME_WEIGHT",
    "TOOL_NORMALISATION",
]

# Memory search (bench/README.md, "Memory search quality" and "Small memories"):
HYBRID_METHOD: Final[Literal["coverage"]] = "coverage"
"""Query-term coverage plus cosine: the only fusion that kept small stores near
vector-only while beating both signals on LoCoMo ("Small memories")."""
HYBRID_VECTOR_WEIGHT: Final = 0.5
"""The cosine's weight in memory's hybrid fusion; 0.4-0.6 is a plateau on LoCoMo
("Small memories", the variant table)."""
HYBRID_CANDIDATES: Final = 50
"""Candidates each retriever hands to memory's fusion ("Memory search quality",
``--fusions all`` measures 20 and 100 beside it)."""
NEIGHBOUR_LEND_SHARE: Final = 0.05
"""A neighbouring entry lends a query term only when at most this share of the entries
hold it: a rare word ties a turn to its neighbour, a common one says little about which
entry answers. Used for archival entries. 0.05 is the smallest share that keeps LoCoMo
archival recall@10 at 0.75 or more with both conversations in one file (0.04: 0.750,
just under); at 0.1 the personal facts lose a question ("Memory recall with
neighbouring turns")."""
RELEVANT_COVERAGE: Final = 0.5
"""A memory search hit is relevant when its words cover at least this share of the
query's IDF mass, or its cosine reaches :data:`RELEVANT_COSINE`; a search with no
relevant hit answers "nothing matches" ("Nothing in memory matches": 0.4-0.5 catch the
same share of questions with no answer, 0.5 one more in 40 for 2 LoCoMo questions of
231 at recall@10)."""
RELEVANT_COSINE: Final = 0.5
"""The cosine that makes a hit relevant, for the default MiniLM embedder ("Nothing in
memory matches": up to 0.5 no answerable facts question loses its hit; 0.55-0.6 catch
more questions with no answer but lose 2-6 of 40 answerable ones)."""
MAX_QUERY_TERMS: Final = 32
"""At most this many distinct terms are kept from a memory search query: a cap on the
cost of one search, not a tuned value."""

# Shared by both searches:
RRF_K: Final = 60.0
"""The reciprocal-rank-fusion constant, where RRF is asked for (the usual 60; no
default uses RRF: "Memory search quality", "Meta-tools")."""
BM25_K1: Final = 1.2
"""BM25 term-frequency saturation of the in-process index (tool search; Lucene's
default: tuning BM25 moved nothing in "Meta-tools")."""
BM25_B: Final = 0.75
"""BM25 length normalisation of the in-process index (tool search; "Meta-tools")."""

# Tool search (bench/README.md, "Meta-tools" and "Tool search that learns from use"):
TOOL_NORMALISATION: Final[Literal["zscore"]] = "zscore"
"""How tool search normalises each signal before the weighted sum ("Meta-tools": the
best min-max, convex and z-score settings tie; z-score does not hinge on one extreme
score)."""
TOOL_BM25_WEIGHT: Final = 0.2
"""Weight of BM25 in tool search ("Meta-tools", tuned on a fixed half of MetaTool)."""
TOOL_DESCRIPTION_WEIGHT: Final = 0.6
"""Weight of the description embedding in tool search ("Meta-tools")."""
TOOL_NAME_WEIGHT: Final = 0.2
"""Weight of the name embedding in tool search ("Meta-tools")."""
TOOL_EXAMPLE_WEIGHT: Final = 0.6
"""Weight of the best cosine to a tool's example requests ("Tool search that learns
from use": 0.3-2.0 within 0.006 of each other)."""
TOOL_NAME_REPEAT: Final = 2
"""How many times a tool's name words count in its BM25 document ("Meta-tools")."""
