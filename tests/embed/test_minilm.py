import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from satchel import SatchelUsageError
from satchel.embed import Embedder, MiniLMEmbedder, default_embedder

MIXED = [
    "Hi!",
    "Caroline went to the LGBTQ support group yesterday and found it really powerful.",
    "",
    "ok",
    " ".join(["A long rambling turn about painting, camping and the kids."] * 12),
    "What did you do last weekend?",
]


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_embedder_satisfies_the_protocol(embedder: MiniLMEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.name == "all-MiniLM-L6-v2-int8"
    assert embedder.dim == 384


def test_vectors_are_float32_unit_rows_of_dim_384(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed(MIXED)
    assert vectors.shape == (len(MIXED), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_order_is_preserved_with_mixed_lengths(embedder: MiniLMEmbedder) -> None:
    together = embedder.embed(MIXED)
    one_by_one = np.stack([embedder.embed([text])[0] for text in MIXED])
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)


def test_batch_size_does_not_change_the_vectors(embedder: MiniLMEmbedder) -> None:
    small = MiniLMEmbedder(batch_size=1, intra_op_threads=1).embed(MIXED)
    np.testing.assert_allclose(small, embedder.embed(MIXED), atol=1e-5)


def test_empty_list_gives_an_empty_array(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_empty_string_embeds_to_a_unit_vector(embedder: MiniLMEmbedder) -> None:
    (vector,) = embedder.embed([""])
    assert np.isfinite(vector).all()
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)


def test_one_megabyte_text_counts_only_its_first_256_tokens(embedder: MiniLMEmbedder) -> None:
    huge = "word " * 200_000  # 1 MB, 200,000 tokens
    head = " ".join(["word"] * 254)  # 254 tokens plus [CLS] and [SEP]
    np.testing.assert_allclose(embedder.embed([huge]), embedder.embed([head]), atol=1e-6)


def test_one_megabyte_text_without_spaces_does_not_crash(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed(["x" * 1_000_000, "a.b," * 250_000])
    assert vectors.shape == (2, 384)
    assert np.isfinite(vectors).all()


def test_a_long_text_is_cut_where_its_full_tokenisation_would_be() -> None:
    words = [f"token{i % 97}" for i in range(2_000)]  # several word pieces each
    prose = "\n".join(" ".join(words[i : i + 10]) for i in range(0, len(words), 10))
    short = MiniLMEmbedder(max_tokens=16)
    np.testing.assert_allclose(short.embed([prose]), short.embed([" ".join(words[:40])]), atol=1e-6)


def test_paraphrase_is_much_closer_than_an_unrelated_sentence(
    embedder: MiniLMEmbedder,
) -> None:
    food, bread, baby = embedder.embed(
        [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The girl is carrying a baby.",
        ]
    )
    assert _cos(food, bread) > 0.7
    assert _cos(food, baby) < 0.1
    assert _cos(food, bread) - _cos(food, baby) > 0.5


@pytest.mark.parametrize(("quantize", "tolerance"), [(False, 0.02), (True, 0.03)])
def test_similarities_match_published_sentence_transformers_figures(
    quantize: bool, tolerance: float
) -> None:
    # https://sbert.net/docs/sentence_transformer/usage/semantic_textual_similarity.html,
    # computed there with the float32 model; int8 weights move them by well under 0.02,
    # int8 arithmetic by up to about 0.025.
    embedder = MiniLMEmbedder(quantize=quantize)
    left = ["The new movie is awesome", "The cat sits outside", "A man is playing guitar"]
    right = ["The dog plays in the garden", "The new movie is so great", "A woman watches TV"]
    published = np.array(
        [
            [0.0543, 0.8939, -0.0502],
            [0.2838, -0.0029, 0.1310],
            [0.2277, -0.0136, -0.0327],
        ]
    )
    measured = embedder.embed(left) @ embedder.embed(right).T
    np.testing.assert_allclose(measured, published, atol=tolerance)


def test_embedding_is_deterministic(embedder: MiniLMEmbedder) -> None:
    np.testing.assert_array_equal(embedder.embed(MIXED), embedder.embed(MIXED))


def test_concurrent_embeds_from_four_threads_match_serial_results() -> None:
    shared = MiniLMEmbedder()  # fresh, so the four threads also race to load it
    batches = [MIXED[i:] + MIXED[:i] for i in range(4)]
    start = threading.Barrier(4, timeout=30)

    def run(texts: list[str]) -> np.ndarray:
        start.wait()
        return shared.embed(texts)

    with ThreadPoolExecutor(max_workers=4) as pool:
        concurrent = list(pool.map(run, batches))

    for texts, vectors in zip(batches, concurrent, strict=True):
        np.testing.assert_allclose(vectors, shared.embed(texts), atol=1e-6)


def test_a_single_string_is_refused_rather_than_split_into_characters(
    embedder: MiniLMEmbedder,
) -> None:
    with pytest.raises(SatchelUsageError, match="single string"):
        embedder.embed("hello")


def test_a_non_string_item_is_refused(embedder: MiniLMEmbedder) -> None:
    with pytest.raises(SatchelUsageError, match="item 1"):
        embedder.embed(["hello", 42])  # type: ignore[list-item]


def test_default_embedder_is_one_shared_instance() -> None:
    assert default_embedder() is default_embedder()
    assert isinstance(default_embedder(), MiniLMEmbedder)


def test_a_lone_surrogate_embeds_as_the_replacement_character(embedder: MiniLMEmbedder) -> None:
    lone, replaced = embedder.embed(["whale \ud800 song", "whale \ufffd\ufffd\ufffd song"])

    assert float(lone @ replaced) > 0.9999


def test_runs_side_by_side_give_the_vectors_of_one_run_at_a_time(
    embedder: MiniLMEmbedder,
) -> None:
    # The int8 default runs one text per run on one thread, several runs at once; an
    # embedder whose runs use every CPU runs them one after another.
    texts = [f"{MIXED[i % len(MIXED)]} (turn {i})" for i in range(40)]
    one_at_a_time = MiniLMEmbedder(intra_op_threads=os.cpu_count() or 1)
    np.testing.assert_allclose(embedder.embed(texts), one_at_a_time.embed(texts), atol=1e-5)
    assert "intra_op_threads=None" in repr(embedder)
