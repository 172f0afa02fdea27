"""Retrieval building blocks shared by memory search and tool search.

* **Terms** (:mod:`satchel.retrieval._text`): :func:`query_terms` turns any user text
  into plain terms safe for a full-text engine (memory); :func:`tokenize` makes the
  stemmed terms of the in-process BM25 index (tools), splitting identifiers with
  :func:`split_identifier` and folding word forms with :func:`stem`; one stop-word list,
  :data:`STOPWORDS` (tool search drops :data:`TOOL_STOPWORDS`).
* **BM25** (:class:`BM25Index`): an incremental Okapi BM25 index over numbered slots,
  and the always-positive :func:`idf` both searches use.
* **Vectors** (:class:`AnnIndex`): a persisted approximate-nearest-neighbour index
  (cosine, HNSW from ``usearch``) over unit vectors keyed by integer ids.
* **Fusion**, two kinds, for two shapes of candidates:
  :func:`fuse_named` (as a :class:`HybridFusion` says; :func:`fuse_hybrid` for the usual
  three signals) fuses memory's named signals over two cut candidate
  lists, keyed, by how sure each signal is (query-term coverage, :func:`term_coverage`,
  plus cosine); :func:`fuse_signals` sums several aligned signals over a whole tool
  catalog after normalising each (:data:`Normalisation`).
* **Settings**: every measured default is a constant here (``HYBRID_*`` for memory,
  ``TOOL_*`` for tools, ``BM25_*``, ``RRF_K``), defined in
  :mod:`satchel.retrieval._settings` with a pointer to its figures in
  ``bench/README.md``.

Nothing here knows about stores, tools or SQL: memory and the meta-tools build on it.
"""

from satchel.retrieval._ann import AnnIndex
from satchel.retrieval._bm25 import BM25Index, idf
from satchel.retrieval._hybrid import (
    DEFAULT_HYBRID_FUSION,
    HybridFusion,
    fuse_hybrid,
    fuse_named,
    lexical_signal,
    signal_weights,
    term_coverage,
)
from satchel.retrieval._settings import (
    BM25_B,
    BM25_K1,
    HYBRID_CANDIDATES,
    HYBRID_METHOD,
    HYBRID_VECTOR_WEIGHT,
    MAX_QUERY_TERMS,
    NEIGHBOUR_LEND_SHARE,
    RELEVANT_COSINE,
    RELEVANT_COVERAGE,
    RRF_K,
    TOOL_BM25_WEIGHT,
    TOOL_DESCRIPTION_WEIGHT,
    TOOL_EXAMPLE_WEIGHT,
    TOOL_NAME_REPEAT,
    TOOL_NAME_WEIGHT,
    TOOL_NORMALISATION,
)
from satchel.retrieval._signals import Normalisation, fuse_signals
from satchel.retrieval._text import (
    STOPWORDS,
    TOOL_STOPWORDS,
    is_wide_text,
    query_terms,
    split_identifier,
    stem,
    tokenize,
)

__all__ = [
    "BM25_B",
    "BM25_K1",
    "DEFAULT_HYBRID_FUSION",
    "HYBRID_CANDIDATES",
    "HYBRID_METHOD",
    "HYBRID_VECTOR_WEIGHT",
    "MAX_QUERY_TERMS",
    "NEIGHBOUR_LEND_SHARE",
    "RELEVANT_COSINE",
    "RELEVANT_COVERAGE",
    "RRF_K",
    "STOPWORDS",
    "TOOL_BM25_WEIGHT",
    "TOOL_DESCRIPTION_WEIGHT",
    "TOOL_EXAMPLE_WEIGHT",
    "TOOL_NAME_REPEAT",
    "TOOL_NAME_WEIGHT",
    "TOOL_NORMALISATION",
    "TOOL_STOPWORDS",
    "AnnIndex",
    "BM25Index",
    "HybridFusion",
    "Normalisation",
    "fuse_hybrid",
    "fuse_named",
    "fuse_signals",
    "idf",
    "is_wide_text",
    "lexical_signal",
    "query_terms",
    "signal_weights",
    "split_identifier",
    "stem",
    "term_coverage",
    "tokenize",
]
