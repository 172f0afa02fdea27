"""An in-memory cosine index over unit float32 vectors: exact when small, IVF when large.

Why this design (measured on this project's 2-core machine, whose memory bandwidth is
only about 4.5 GB/s: one 10,000 x 384 float32 matrix-vector product takes ~3.4 ms):

* **Exact** search is one BLAS matrix-vector product over a cached float32 matrix.
  Below :attr:`VectorIndex.exact_below` live rows (10,000) it costs at most ~3.5 ms
  and has perfect recall, so small stores (most agents' memories) use it.
* Brute force does not scale: 100k rows cost ~34 ms and 1M rows ~310 ms a query. No
  ANN library is in satchel's dependency set (``faiss-cpu``, ``usearch`` and
  ``hnswlib`` all install from wheels here and would be the next step past a few
  million rows), so the large case is an **IVF over PCA-reduced vectors** in numpy:

  - a PCA fitted on a sample projects rows to 64 dimensions (6x less memory traffic
    per scanned row);
  - k-means (L2, in the reduced space) splits them into about ``sqrt(n)`` cells, and
    the reduced rows are stored contiguously cell by cell, so scanning a cell is one
    small matrix product with no gather;
  - a query scans the cells nearest to it, 30% of them (``probe_fraction``), keeps the
    best 256 rows by reduced score (``rerank``) and re-scores those exactly with the
    full vectors. Rows added since the last clustering (the "tail") are scored
    exactly too, and the index re-clusters itself when the tail passes 1/16 of it.

  On 11,700 real all-MiniLM-L6-v2 sentence vectors (clustered at that size on purpose),
  recall@10 against exact search was 0.94 with these settings (0.90 at 20% probed,
  0.96 with 96 reduced dimensions at 30%); ``tests/memory`` checks >= 0.9 on
  clustered data. Vector search p50 (``bench/memory_scale.py``, busy machine): 2-3 ms
  at 10k rows, 4-10 ms at 100k, 17-28 ms at 1M. Building the index at first use costs
  about 2 s at 100k and 25-50 s at 1M (reading the vectors, PCA, k-means), once per
  process.
* **Filters**: an owner filter is applied inside the scan. Anything richer (kind, tags,
  time, labels) is the backend's job, by over-fetching and post-filtering, or, when the
  filter is very selective, by scoring an explicit id list exactly with
  :meth:`VectorIndex.scores_for` (a pre-filter).

Rows are append-only: re-adding an id marks its old row dead, so a search reads a
consistent snapshot without holding the lock during its scan. Dead rows are compacted
away once they pass a quarter of the index. Ids are non-negative integers (a backend's
row ids); memory is ``4 x dim`` bytes per row plus ``4 x 64`` once clustered.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["VectorIndex"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]


@dataclass(kw_only=True, frozen=True)
class _Clusters:
    mean: F32  # (dim,) mean of the rows the projection was fitted on
    projection: F32  # (dim, reduced) top principal directions
    centroids: F32  # (cells, reduced) k-means centroids in the reduced space
    half_norms: F32  # (cells,) half the squared norm of each centroid
    order: I64  # row positions sorted by cell
    bounds: I64  # (cells + 1,) slice bounds of each cell in ``order``
    reduced: F32  # (clustered_rows, reduced) reduced rows, in ``order``
    owners: I32  # (clustered_rows,) owner of each row, in ``order``
    clustered_rows: int  # rows [0, clustered_rows) are in ``order``


class VectorIndex:
    """Cosine top-k over unit vectors keyed by integer ids, thread-safe.

    Args:
        dim: Dimensions of every vector.
        exact_below: Below this many live rows, every search is exact.
        reduced_dim: Dimensions kept by the PCA used for the IVF scan.
        probe_fraction: Share of the cells scanned per query once clustered.
        rerank: How many rows of the IVF scan are re-scored with the full vectors.
        nprobe: A fixed number of cells to scan instead of ``probe_fraction``.
        seed: Seed for the clustering's sampling.
    """

    def __init__(
        self,
        dim: int,
        *,
        exact_below: int = 10_000,
        reduced_dim: int = 64,
        probe_fraction: float = 0.25,
        rerank: int = 256,
        nprobe: int | None = None,
        seed: int = 0,
    ) -> None:
        self.dim = dim
        self.exact_below = exact_below
        self.reduced_dim = min(reduced_dim, dim)
        self.probe_fraction = probe_fraction
        self.rerank = rerank
        self._nprobe = nprobe
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()
        self._train_lock = threading.Lock()
        self._n = 0
        self._vecs: F32 = np.zeros((1024, dim), dtype=np.float32)
        self._ids: I64 = np.zeros(1024, dtype=np.int64)
        self._owner: I32 = np.zeros(1024, dtype=np.int32)
        self._alive = np.zeros(1024, dtype=np.bool_)
        self._pos_of: I64 = np.full(1024, -1, dtype=np.int64)
        self._live = 0
        self._clusters: _Clusters | None = None
        self._epoch = 0  # bumped when compaction moves rows

    def __len__(self) -> int:
        return self._live

    # --- writing -------------------------------------------------------------------

    def _grow(self, rows: int, max_id: int) -> None:
        if self._n + rows > len(self._ids):
            cap = max(len(self._ids) * 2, self._n + rows)
            vecs = np.zeros((cap, self.dim), dtype=np.float32)
            vecs[: self._n] = self._vecs[: self._n]
            self._vecs = vecs
            self._ids = np.resize(self._ids, cap)
            self._owner = np.resize(self._owner, cap)
            alive = np.zeros(cap, dtype=np.bool_)
            alive[: self._n] = self._alive[: self._n]
            self._alive = alive
        if max_id >= len(self._pos_of):
            cap = max(len(self._pos_of) * 2, max_id + 1)
            pos = np.full(cap, -1, dtype=np.int64)
            pos[: len(self._pos_of)] = self._pos_of
            self._pos_of = pos

    def add(self, ids: I64, vectors: F32, owners: I32) -> None:
        """Add or replace vectors.

        Args:
            ids: One non-negative id per row; an id already present is replaced.
            vectors: Unit vectors, shape ``(len(ids), dim)``.
            owners: An owner number per row, for :meth:`search`'s owner filter.
        """
        if len(ids) == 0:
            return
        ids = np.asarray(ids, dtype=np.int64)
        # Keep only the last occurrence of an id within this batch.
        _, last = np.unique(ids[::-1], return_index=True)
        keep = np.sort(len(ids) - 1 - last)
        ids, vectors, owners = ids[keep], vectors[keep], np.asarray(owners)[keep]
        with self._lock:
            self._grow(len(ids), int(ids.max()))
            old = self._pos_of[ids]
            old = old[old >= 0]
            self._alive[old] = False
            self._live -= len(old)
            start, stop = self._n, self._n + len(ids)
            self._vecs[start:stop] = vectors
            self._ids[start:stop] = ids
            self._owner[start:stop] = owners
            self._alive[start:stop] = True
            self._pos_of[ids] = np.arange(start, stop)
            self._n = stop
            self._live += len(ids)
            if self._n - self._live > max(1024, self._n // 4):
                self._compact()

    def remove(self, ids: I64) -> None:
        """Forget these ids (unknown ids are ignored)."""
        ids = np.asarray(ids, dtype=np.int64)
        ids = ids[(ids >= 0) & (ids < len(self._pos_of))]
        with self._lock:
            pos = self._pos_of[ids]
            pos = pos[pos >= 0]
            pos = pos[self._alive[pos]]
            self._alive[pos] = False
            self._pos_of[self._ids[pos]] = -1
            self._live -= len(pos)

    def _compact(self) -> None:
        keep = np.flatnonzero(self._alive[: self._n])
        self._vecs = np.ascontiguousarray(self._vecs[keep])
        self._ids = self._ids[keep]
        self._owner = self._owner[keep]
        self._alive = np.ones(len(keep), dtype=np.bool_)
        self._n = len(keep)
        self._pos_of[:] = -1
        self._pos_of[self._ids] = np.arange(self._n)
        self._clusters = None
        self._epoch += 1

    # --- clustering ----------------------------------------------------------------

    def _maybe_cluster(self) -> None:
        clusters = self._clusters
        live = self._live
        if live < self.exact_below:
            return
        if clusters is not None:
            unclustered = self._n - clusters.clustered_rows
            if unclustered < max(4096, live // 16):
                return
        with self._train_lock:
            if self._clusters is not clusters:
                return  # another thread re-clustered meanwhile
            with self._lock:
                n, vecs, owners, epoch = self._n, self._vecs, self._owner, self._epoch
            if clusters is not None and len(clusters.centroids) ** 2 * 2 >= live:
                fitted = clusters  # same cells; only place the new rows
            else:
                fitted = self._fit(vecs[:n])
            reduced = self._reduce(vecs[:n], fitted)
            cells = self._assign(reduced, fitted)
            order = np.argsort(cells, kind="stable").astype(np.int64)
            bounds = np.searchsorted(cells[order], np.arange(len(fitted.centroids) + 1))
            fresh = _Clusters(
                mean=fitted.mean,
                projection=fitted.projection,
                centroids=fitted.centroids,
                half_norms=fitted.half_norms,
                order=order,
                bounds=bounds.astype(np.int64),
                reduced=np.ascontiguousarray(reduced[order]),
                owners=owners[:n][order],
                clustered_rows=n,
            )
            with self._lock:
                if self._epoch == epoch:
                    self._clusters = fresh

    def _fit(self, vecs: F32) -> _Clusters:
        """PCA to ``reduced_dim`` dimensions, then k-means (L2) with about ``sqrt(n)``
        cells in the reduced space, both on a sample."""
        n = len(vecs)
        cells = max(16, round(math.sqrt(n)))
        sample = vecs[np.sort(self._rng.choice(n, size=min(n, cells * 40), replace=False))]
        mean = sample.mean(axis=0).astype(np.float32)
        _, _, vt = np.linalg.svd(sample[:20_000] - mean, full_matrices=False)
        projection = np.ascontiguousarray(vt[: self.reduced_dim].T, dtype=np.float32)
        points = (sample - mean) @ projection
        centroids = points[self._rng.choice(len(points), size=cells, replace=False)].copy()
        for _ in range(10):
            half = 0.5 * np.einsum("ij,ij->i", centroids, centroids)
            assign = np.argmax(points @ centroids.T - half, axis=1)
            counts = np.bincount(assign, minlength=cells).astype(np.float32)
            sums = np.zeros_like(centroids)
            np.add.at(sums, assign, points)
            empty = counts == 0
            centroids = sums / np.maximum(counts, 1)[:, None]
            centroids[empty] = points[self._rng.choice(len(points), size=int(empty.sum()))]
        centroids = centroids.astype(np.float32)
        return _Clusters(
            mean=mean,
            projection=projection,
            centroids=centroids,
            half_norms=(0.5 * np.einsum("ij,ij->i", centroids, centroids)).astype(np.float32),
            order=np.zeros(0, np.int64),
            bounds=np.zeros(1, np.int64),
            reduced=np.zeros((0, self.reduced_dim), np.float32),
            owners=np.zeros(0, np.int32),
            clustered_rows=0,
        )

    @staticmethod
    def _reduce(vecs: F32, fitted: _Clusters) -> F32:
        out = np.empty((len(vecs), fitted.projection.shape[1]), dtype=np.float32)
        for start in range(0, len(vecs), 65_536):
            chunk = vecs[start : start + 65_536]
            out[start : start + len(chunk)] = (chunk - fitted.mean) @ fitted.projection
        return out

    @staticmethod
    def _assign(reduced: F32, fitted: _Clusters) -> I64:
        out = np.empty(len(reduced), dtype=np.int64)
        for start in range(0, len(reduced), 65_536):
            chunk = reduced[start : start + 65_536]
            scores = chunk @ fitted.centroids.T - fitted.half_norms
            out[start : start + len(chunk)] = np.argmax(scores, axis=1)
        return out

    # --- searching -----------------------------------------------------------------

    def _top(self, scores: F32, k: int) -> I64:
        k = min(k, len(scores))
        if k <= 0:
            return np.zeros(0, np.int64)
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return top[np.isfinite(scores[top])].astype(np.int64)

    def search(self, query: F32, k: int, *, owner: int | None = None) -> tuple[I64, F32]:
        """The ``k`` nearest ids to ``query`` and their cosine similarities, best first.

        Args:
            query: A unit vector.
            k: How many to return (fewer if the index holds fewer).
            owner: Only rows with this owner number.
        """
        self._maybe_cluster()
        with self._lock:
            n, clusters = self._n, self._clusters
            vecs, ids, alive, owners = self._vecs, self._ids, self._alive, self._owner
        if k <= 0 or n == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        if clusters is None:
            scores = vecs[:n] @ query
            mask = alive[:n] if owner is None else alive[:n] & (owners[:n] == owner)
            scores[~mask] = -np.inf
            top = self._top(scores, k)
            return ids[top].copy(), scores[top]
        # IVF over reduced vectors for candidates, then exact scores for the best ones.
        cells = len(clusters.centroids)
        nprobe = min(cells, self._nprobe or max(8, math.ceil(cells * self.probe_fraction)))
        reduced_query = query @ clusters.projection
        near = np.argpartition(
            -(clusters.centroids @ reduced_query - clusters.half_norms), nprobe - 1
        )
        spans = sorted(
            (int(clusters.bounds[c]), int(clusters.bounds[c + 1])) for c in near[:nprobe]
        )
        total = sum(b - a for a, b in spans)
        rough = np.empty(total, dtype=np.float32)
        offset = 0
        for a, b in spans:  # contiguous cells: one small product each, no gather
            np.matmul(clusters.reduced[a:b], reduced_query, out=rough[offset : offset + b - a])
            offset += b - a
        rows = np.concatenate([clusters.order[a:b] for a, b in spans])
        if owner is not None:
            mine = np.concatenate([clusters.owners[a:b] for a, b in spans]) == owner
            rough[~mine] = -np.inf
        shortlist = rows[self._top(rough, max(self.rerank, k))]
        shortlist = shortlist[alive[shortlist]]  # deleted rows are rare: check only these
        tail = np.arange(clusters.clustered_rows, n, dtype=np.int64)
        if len(tail):
            keep = alive[tail] if owner is None else alive[tail] & (owners[tail] == owner)
            shortlist = np.concatenate([shortlist, tail[keep]])
        exact = vecs[shortlist] @ query
        top = self._top(exact, k)
        return ids[shortlist[top]].copy(), exact[top]

    def scores_for(self, query: F32, ids: I64) -> tuple[I64, F32]:
        """Exact cosine of ``query`` with each of ``ids`` that the index holds.

        Returns:
            The ids found and their scores (ids without a vector are left out).
        """
        ids = np.asarray(ids, dtype=np.int64)
        with self._lock:
            vecs, pos_of = self._vecs, self._pos_of
            ids = ids[(ids >= 0) & (ids < len(pos_of))]
            pos = pos_of[ids]
        found = pos >= 0
        return ids[found], vecs[pos[found]] @ query
