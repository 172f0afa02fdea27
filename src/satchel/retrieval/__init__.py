"""Retrieval building blocks shared by memory and the meta-tools.

* :class:`AnnIndex`: a persisted approximate-nearest-neighbour index (cosine, HNSW
  from ``usearch``) over unit vectors keyed by integer ids.
"""

from satchel.retrieval._ann import AnnIndex

__all__ = ["AnnIndex"]
