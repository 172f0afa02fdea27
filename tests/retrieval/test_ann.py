"""The persisted nearest-neighbour index (:class:`satchel.retrieval.AnnIndex`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from satchel import StorageError
from satchel.retrieval import AnnIndex

F32 = npt.NDArray[np.float32]


def _unit(rows: npt.NDArray[np.float64]) -> F32:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_exact_search_replace_and_remove() -> None:
    rng = np.random.default_rng(0)
    vectors = _unit(rng.standard_normal((100, 16)))
    index = AnnIndex(16)
    index.add(np.arange(100), vectors)
    ids, scores = index.search(vectors[7], 3)
    assert ids[0] == 7
    assert scores[0] == pytest.approx(1.0, abs=1e-3)
    assert np.all(np.diff(scores) <= 1e-6)
    index.add(np.array([7]), vectors[8:9])  # 7 now looks like 8
    ids, _ = index.search(vectors[8], 2)
    assert set(ids.tolist()) == {7, 8}
    assert len(index) == 100
    index.remove(np.array([7, 8, 9999]))
    ids, _ = index.search(vectors[8], 100)
    assert 7 not in ids.tolist()
    assert 8 not in ids.tolist()
    assert len(index) == 98
    assert index.contains(np.array([6, 7, -1])).tolist() == [True, False, False]
    assert sorted(index.ids().tolist()) == [i for i in range(100) if i not in (7, 8)]


def test_repeated_ids_in_one_batch_keep_the_last_vector() -> None:
    vectors = _unit(np.eye(4) + 0.01)
    index = AnnIndex(4)
    index.add(np.array([5, 5]), vectors[:2])
    assert len(index) == 1
    assert index.search(vectors[1], 1)[0].tolist() == [5]
    assert index.search(vectors[1], 1)[1][0] == pytest.approx(1.0, abs=1e-3)


def test_scores_for_skips_missing_ids_and_matches_the_cosine() -> None:
    rng = np.random.default_rng(3)
    vectors = _unit(rng.standard_normal((20, 8)))
    index = AnnIndex(8)
    index.add(np.arange(20), vectors)
    ids, scores = index.scores_for(vectors[0], np.array([3, 50, 4, -2]))
    assert ids.tolist() == [3, 4]
    assert scores == pytest.approx(vectors[[3, 4]] @ vectors[0], abs=2e-3)
    empty_ids, empty_scores = index.scores_for(vectors[0], np.array([99]))
    assert len(empty_ids) == 0
    assert len(empty_scores) == 0


def test_the_graph_keeps_recall_at_ten_against_exact_search() -> None:
    rng = np.random.default_rng(2)
    centers = _unit(rng.standard_normal((200, 32)))
    picks = rng.integers(0, 200, 6_000)
    vectors = _unit(centers[picks] + 0.15 * rng.standard_normal((6_000, 32)))
    index = AnnIndex(32, exact_below=1_000)
    index.add(np.arange(6_000), vectors)
    queries = _unit(centers[:50] + 0.1 * rng.standard_normal((50, 32)))
    recall: list[float] = []
    for query in queries:
        exact = set(np.argsort(-(vectors @ query))[:10].tolist())
        found, scores = index.search(query, 10)
        assert np.all(np.diff(scores) <= 1e-6)
        recall.append(len(exact & set(found.tolist())) / 10)
    assert float(np.mean(recall)) >= 0.98
    extra = _unit(rng.standard_normal((10, 32)))
    index.add(np.arange(6_000, 6_010), extra)
    assert index.search(extra[4], 1)[0][0] == 6_004


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    vectors = _unit(rng.standard_normal((300, 24)))
    index = AnnIndex(24)
    index.add(np.arange(1_000, 1_300), vectors)
    index.remove(np.array([1_010]))
    index.save(tmp_path / "i.usearch")
    assert [p.name for p in tmp_path.iterdir()] == ["i.usearch"]  # no temporary left
    loaded = AnnIndex.load(tmp_path / "i.usearch", 24)
    assert len(loaded) == 299
    assert loaded.search(vectors[5], 1)[0].tolist() == [1_005]
    assert 1_010 not in loaded.search(vectors[10], 5)[0].tolist()
    loaded.add(np.array([7]), vectors[10:11])  # a loaded index takes writes
    assert loaded.search(vectors[10], 1)[0].tolist() == [7]


def test_a_mapped_index_searches_like_a_loaded_one_and_keeps_changes_in_an_overlay(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(5)
    vectors = _unit(rng.standard_normal((6_000, 24)))
    index = AnnIndex(24)
    index.add(np.arange(6_000), vectors)
    index.save(tmp_path / "i.usearch")
    loaded = AnnIndex.load(tmp_path / "i.usearch", 24)
    mapped = AnnIndex.load(tmp_path / "i.usearch", 24, view=True)
    assert mapped.viewed
    assert not loaded.viewed
    for row in (0, 17, 5_999):
        assert (
            mapped.search(vectors[row], 10)[0].tolist()
            == loaded.search(vectors[row], 10)[0].tolist()
        )
    assert mapped.scores_for(vectors[3], np.array([3, 4]))[1].tolist() == (
        loaded.scores_for(vectors[3], np.array([3, 4]))[1].tolist()
    )
    (tmp_path / "i.usearch").unlink()  # a later save deleted it: the map still serves
    mapped.remove(np.array([17]))
    mapped.add(np.array([9_000]), vectors[17:18])
    assert mapped.viewed  # changes went to the overlay: nothing was copied
    assert mapped.overlaid == 2
    assert len(mapped) == 6_000
    assert mapped.search(vectors[17], 1)[0].tolist() == [9_000]
    assert mapped.contains(np.array([17, 9_000, 18])).tolist() == [False, True, True]
    mapped.save(tmp_path / "again.usearch")  # saving applies the overlay to a copy
    assert not mapped.viewed
    assert mapped.overlaid == 0
    assert len(mapped) == 6_000
    assert AnnIndex.load(tmp_path / "again.usearch", 24).search(vectors[17], 1)[0].tolist() == [
        9_000
    ]


def test_loading_garbage_or_another_width_is_a_storage_error(tmp_path: Path) -> None:
    (tmp_path / "bad.usearch").write_bytes(b"not an index" * 10)
    with pytest.raises(StorageError):
        AnnIndex.load(tmp_path / "bad.usearch", 8)
    with pytest.raises(StorageError):
        AnnIndex.load(tmp_path / "missing.usearch", 8)
    index = AnnIndex(8)
    index.add(np.arange(3), _unit(np.eye(8)[:3] + 0.1))
    index.save(tmp_path / "eight.usearch")
    with pytest.raises(StorageError):
        AnnIndex.load(tmp_path / "eight.usearch", 16)


def test_save_into_a_missing_folder_is_a_storage_error(tmp_path: Path) -> None:
    index = AnnIndex(4)
    with pytest.raises(StorageError):
        index.save(tmp_path / "nope" / "i.usearch")


def test_empty_index_and_zero_k() -> None:
    index = AnnIndex(4)
    assert len(index.search(np.ones(4, np.float32) / 2, 5)[0]) == 0
    index.add(np.array([1]), np.ones((1, 4), np.float32) / 2)
    assert len(index.search(np.ones(4, np.float32) / 2, 0)[0]) == 0
    index.add(np.zeros(0, np.int64), np.zeros((0, 4), np.float32))
    index.remove(np.zeros(0, np.int64))
    assert len(index) == 1


def test_vectors_returns_the_stored_unit_rows_of_known_ids() -> None:
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(5, 16)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    index = AnnIndex(16)
    index.add(np.arange(5, dtype=np.int64), rows)
    ids, found = index.vectors(np.asarray([3, 99, 1], np.int64))
    assert ids.tolist() == [3, 1]
    assert np.allclose(np.linalg.norm(found, axis=1), 1.0, atol=1e-3)
    assert np.allclose(found, rows[[3, 1]], atol=2e-3)


def test_an_overlay_past_its_limit_copies_the_mapped_index(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    vectors = _unit(rng.standard_normal((100, 8)))
    index = AnnIndex(8)
    index.add(np.arange(100), vectors)
    index.save(tmp_path / "i.usearch")
    mapped = AnnIndex.load(tmp_path / "i.usearch", 8, view=True, overlay_limit=10)
    mapped.add(np.arange(200, 204), vectors[:4])  # 4 new ids: 8 changes at most
    assert mapped.viewed
    assert mapped.overlaid == 4
    mapped.remove(np.arange(0, 7))  # 4 + 7 hidden would pass 10: copied instead
    assert not mapped.viewed
    assert mapped.overlaid == 0
    assert len(mapped) == 97
    assert sorted(mapped.ids().tolist()) == [*range(7, 100), 200, 201, 202, 203]
    assert mapped.search(vectors[0], 1)[0].tolist() == [200]


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.lists(st.integers(0, 80), min_size=1, max_size=6)),
        st.tuples(st.just("remove"), st.lists(st.integers(0, 90), min_size=1, max_size=6)),
        st.tuples(st.just("search"), st.integers(0, 79)),
    ),
    max_size=25,
)


@settings(max_examples=80)
@given(ops=_OPS, limit=st.sampled_from([6, 30, 2_048]), seed=st.integers(0, 2**16))
def test_a_mapped_index_with_an_overlay_behaves_like_one_in_memory(
    tmp_path_factory: pytest.TempPathFactory,
    ops: list[tuple[str, object]],
    limit: int,
    seed: int,
) -> None:
    """Any sequence of adds (new and present ids), removes (present and unknown ids)
    and searches gives a mapped index the same contents and answers as an index in
    memory (both exact at this size), before and after the overlay is copied in."""
    rng = np.random.default_rng(seed)
    pool = _unit(rng.standard_normal((80, 12)))
    folder = tmp_path_factory.mktemp("overlay")
    memory = AnnIndex(12)
    memory.add(np.arange(40), pool[:40])
    memory.save(folder / "i.usearch")
    mapped = AnnIndex.load(folder / "i.usearch", 12, view=True, overlay_limit=limit)
    for op, arg in ops:
        if op == "add":
            ids = np.asarray(arg, np.int64)
            rows = pool[rng.integers(0, 80, len(ids))]
            memory.add(ids, rows)
            mapped.add(ids, rows)
        elif op == "remove":
            ids = np.asarray(arg, np.int64)
            memory.remove(ids)
            mapped.remove(ids)
        else:
            query = pool[int(arg)]  # pyright: ignore[reportArgumentType]
            for k in (1, 5, 50):
                want_ids, want_scores = memory.search(query, k)
                got_ids, got_scores = mapped.search(query, k)
                assert np.allclose(got_scores, want_scores, atol=1e-6)
                assert set(got_ids.tolist()) <= set(memory.ids().tolist())
                assert len(got_ids) == len(want_ids)
        assert len(mapped) == len(memory)
        assert sorted(mapped.ids().tolist()) == sorted(memory.ids().tolist())
    probe = np.arange(-1, 92)
    assert mapped.contains(probe).tolist() == memory.contains(probe).tolist()
    got_ids, got_rows = mapped.vectors(probe)
    want_ids, want_rows = memory.vectors(probe)
    assert got_ids.tolist() == want_ids.tolist()
    assert np.allclose(got_rows, want_rows, atol=1e-6)
    query = pool[0]
    assert np.allclose(mapped.scores_for(query, probe)[1], memory.scores_for(query, probe)[1])
    mapped.save(folder / "again.usearch")
    again = AnnIndex.load(folder / "again.usearch", 12, view=True)
    assert sorted(again.ids().tolist()) == sorted(memory.ids().tolist())
