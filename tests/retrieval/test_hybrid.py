"""Properties of coverage fusion and term coverage (pure functions, no store)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from satchel.memory import Fusion
from satchel.retrieval import HybridFusion, fuse_hybrid, idf, term_coverage

KEYS = st.sampled_from([f"k{i}" for i in range(8)])
# Scores on a grid of 1/1000: fusion is arithmetic on floats, so differences below
# rounding (1e-38 against 0.0) are not orderings it could keep.
UNIT = st.integers(0, 1000).map(lambda n: n / 1000)
COSINE = st.integers(-1000, 1000).map(lambda n: n / 1000)
SCORE = st.floats(min_value=1e-9, max_value=1e6, allow_nan=False)
TERMS = ["ada", "job", "lisbon", "brother"]


def _order(ranked: list[tuple[str, float]]) -> list[str]:
    return [key for key, _ in ranked]


@given(st.dictionaries(KEYS, SCORE, min_size=1), st.dictionaries(KEYS, COSINE), SCORE)
def test_without_coverage_the_bm25_scale_does_not_change_the_ranking(
    bm25: dict[str, float], vector: dict[str, float], factor: float
) -> None:
    scaled = {key: score * factor for key, score in bm25.items()}
    first, second = fuse_hybrid(bm25, vector), fuse_hybrid(scaled, vector)
    assert {k for k, _ in first} == {k for k, _ in second}
    for (_, a), (_, b) in zip(first, second, strict=True):
        assert abs(a - b) < 1e-6


@given(st.dictionaries(KEYS, SCORE, min_size=1), st.dictionaries(KEYS, COSINE, min_size=1))
def test_with_coverage_the_bm25_scores_themselves_do_not_matter(
    bm25: dict[str, float], vector: dict[str, float]
) -> None:
    coverage = dict.fromkeys(bm25, 0.5)
    other = dict.fromkeys(bm25, 1.0)
    assert fuse_hybrid(bm25, vector, coverage=coverage) == fuse_hybrid(
        other, vector, coverage=coverage
    )


@given(st.dictionaries(KEYS, COSINE, min_size=1), UNIT)
def test_a_signal_with_equal_scores_for_all_contributes_no_ordering(
    vector: dict[str, float], share: float
) -> None:
    bm25 = dict.fromkeys(vector, 1e-6)
    coverage = dict.fromkeys(vector, share)
    fused = fuse_hybrid(bm25, vector, coverage=coverage)
    assert [vector[k] for k in _order(fused)] == sorted(vector.values(), reverse=True)


@given(st.dictionaries(KEYS, UNIT, min_size=1), COSINE)
def test_equal_cosines_leave_the_order_to_coverage(
    coverage: dict[str, float], cosine: float
) -> None:
    vector = dict.fromkeys(coverage, cosine)
    fused = fuse_hybrid(dict.fromkeys(coverage, 1.0), vector, coverage=coverage)
    assert [coverage[k] for k in _order(fused)] == sorted(coverage.values(), reverse=True)


@given(
    st.dictionaries(KEYS, UNIT, min_size=2),
    st.dictionaries(KEYS, COSINE, min_size=2),
    UNIT,
    UNIT,
)
def test_more_coverage_or_a_higher_cosine_never_lowers_a_candidate(
    coverage: dict[str, float], vector: dict[str, float], more: float, closer: float
) -> None:
    bm25 = dict.fromkeys(coverage, 1.0)
    target = next(iter(coverage))
    before = dict(fuse_hybrid(bm25, vector, coverage=coverage))
    raised = {**coverage, target: min(1.0, coverage[target] + more)}
    nearer = {**vector, target: min(1.0, vector.get(target, 0.0) + closer)}
    after = dict(fuse_hybrid(bm25, nearer, coverage=raised))
    assert after[target] >= before[target]
    for key, score in before.items():
        if key != target:
            assert after[key] == score


@given(st.sets(st.sampled_from(TERMS)), st.dictionaries(st.sampled_from(TERMS), UNIT))
def test_coverage_is_a_share_that_grows_with_every_term_matched(
    matched: set[str], fractions: dict[str, float]
) -> None:
    documents = 100
    frequency = {term: fractions.get(term, 0.0) * documents for term in TERMS}
    cover = term_coverage({"some": matched, "all": TERMS, "none": []}, frequency, documents)
    assert cover["none"] == 0.0
    assert abs(cover["all"] - 1.0) < 1e-9
    assert 0.0 <= cover["some"] <= 1.0
    for extra in set(TERMS) - matched:
        more = term_coverage({"x": [*matched, extra]}, frequency, documents)["x"]
        assert more > cover["some"]


def test_a_word_in_every_entry_covers_almost_nothing_of_a_query_with_an_unseen_word() -> None:
    cover = term_coverage({"fact": ["ada"]}, {"ada": 5, "job": 0}, 5)
    assert cover["fact"] < 0.05
    assert idf(0, 5) > 20 * idf(5, 5)


def test_coverage_fusion_lets_a_clear_meaning_beat_name_only_matches() -> None:
    # The Ada case in numbers: all five facts match only "ada" (BM25 noise of ~1e-6),
    # the job fact is the closest in meaning.
    bm25 = {"allergy": 2.1e-6, "brother": 1.9e-6, "book": 1.7e-6, "race": 1.6e-6, "job": 1.2e-6}
    vector = {"job": 0.56, "allergy": 0.55, "brother": 0.53, "race": 0.52, "book": 0.50}
    coverage = term_coverage({key: ["ada"] for key in bm25}, {"ada": 5, "job": 0}, 5)
    assert fuse_hybrid(bm25, vector, coverage=coverage)[0][0] == "job"
    assert (
        fuse_hybrid(bm25, vector, HybridFusion(method="minmax", vector_weight=0.4))[0][0] != "job"
    )


def test_memory_exports_the_hybrid_fusion_under_its_old_name() -> None:
    assert Fusion is HybridFusion
    assert Fusion().method == HybridFusion().method
