"""The int8-arithmetic copy of the embedding model: built once, cached, and guarded.

Each test that builds a copy uses its own cache directory, so it really converts the
bundled model (a few seconds in a child process)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from satchel import EmbeddingError
from satchel.embed import MiniLMEmbedder
from satchel.embed._files import resolve_model_path
from satchel.embed._quantize import (
    BUILD_MESSAGE,
    CACHE_ENV_VAR,
    QUANTIZE_ENV_VAR,
    RECIPE,
    RECIPES,
    model_cache_dir,
    quantize_by_default,
    quantized_model,
)

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The new movie is awesome.",
    "Find me a cheap flight from Paris to Rome next Friday.",
    "",
    "List the open pull requests of the satchel repository and their reviewers.",
]


def test_int8_vectors_stay_close_to_the_float_vectors(embedder: MiniLMEmbedder) -> None:
    assert embedder.quantize
    fast = embedder.embed(SENTENCES)
    exact = MiniLMEmbedder(quantize=False).embed(SENTENCES)
    agreement = (fast * exact).sum(axis=1)
    assert agreement.min() > 0.97
    np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)


def test_every_int8_sum_fits_the_16_bit_lanes_of_cpus_without_vnni(
    embedder: MiniLMEmbedder,
) -> None:
    # Issue 27 §6: without VNNI, onnxruntime adds each pair of uint8 x int8 products
    # into a saturating 16-bit lane (VPMADDUBSW); those CPUs get the same vectors as
    # VNNI ones only if no pair can pass 32767, whatever the activations (0..255).
    onnx = pytest.importorskip("onnx")
    numpy_helper = pytest.importorskip("onnx.numpy_helper")
    embedder.load()
    model = onnx.load(str(quantized_model(embedder.model_path)))
    weights = [
        numpy_helper.to_array(tensor).astype(np.int32)
        for tensor in model.graph.initializer
        if tensor.data_type == onnx.TensorProto.INT8 and tensor.name.endswith("_quantized")
    ]
    assert len(weights) >= 36  # six layers of six weight matrices, all quantised
    largest = max(int(np.abs(w).max()) for w in weights)
    assert 2 * 255 * largest <= 32767


def test_a_copy_built_by_another_recipe_is_replaced_not_reused(tmp_path: Path) -> None:
    source = resolve_model_path()
    (before,) = (r for r in RECIPES.values() if r != RECIPE and not r.unsigned_weights)
    old = quantized_model(source, cache_dir=tmp_path, recipe=before)
    new = quantized_model(source, cache_dir=tmp_path)
    assert new != old
    assert [p.name for p in tmp_path.iterdir()] == [new.name]


def test_the_copy_is_built_once_and_then_reused(tmp_path: Path) -> None:
    source = resolve_model_path()
    steps: list[str] = []
    first = quantized_model(source, cache_dir=tmp_path, progress=steps.append)
    stamp = first.stat().st_mtime_ns
    second = quantized_model(source, cache_dir=tmp_path, progress=steps.append)
    assert steps == [BUILD_MESSAGE]  # reported before the build, not for the reuse
    assert second == first
    assert second.stat().st_mtime_ns == stamp
    assert first.parent == tmp_path
    assert [p.name for p in tmp_path.iterdir()] == [first.name]  # no scratch left behind


def test_a_new_build_removes_copies_made_for_other_runtimes(tmp_path: Path) -> None:
    source = resolve_model_path()
    stale = tmp_path / f"{source.stem}-{'0' * 24}.onnx"
    stale.write_bytes(b"a copy built by an older onnxruntime")
    unrelated = tmp_path / "other-model-000000000000000000000000.onnx"
    unrelated.write_bytes(b"not ours")

    built = quantized_model(source, cache_dir=tmp_path)

    assert built.is_file()
    assert not stale.exists()
    assert unrelated.exists()


def test_a_damaged_cached_copy_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    cached = quantized_model(resolve_model_path())
    reference = MiniLMEmbedder().embed(SENTENCES[:2])
    cached.write_bytes(b"not a model, a truncated write")
    with caplog.at_level(logging.WARNING, logger="satchel.embed"):
        vectors = MiniLMEmbedder().embed(SENTENCES[:2])
    assert "unreadable; rebuilding" in caplog.text
    np.testing.assert_allclose(vectors, reference, atol=1e-6)
    assert cached.stat().st_size > 1_000_000


def test_an_unconvertible_model_is_an_embedding_error_naming_it(tmp_path: Path) -> None:
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"\x00garbage, not protobuf")
    with pytest.raises(EmbeddingError, match="Cannot build an int8 copy") as caught:
        quantized_model(broken, cache_dir=tmp_path / "cache")
    assert caught.value.details["path"] == str(broken)
    assert not any((tmp_path / "cache").glob("*.onnx"))


def test_a_broken_model_still_reports_the_load_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"\x00garbage, not protobuf")
    with pytest.raises(EmbeddingError, match="Cannot load the embedding model"):
        MiniLMEmbedder(model_path=broken).embed(["hello"])


def test_an_unwritable_cache_falls_back_to_float_arithmetic_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file-not-a-directory"
    blocker.write_text("x")
    monkeypatch.setenv(CACHE_ENV_VAR, str(blocker))
    with caplog.at_level(logging.WARNING, logger="satchel.embed"):
        vectors = MiniLMEmbedder().embed(SENTENCES[:2])
    assert "float32 arithmetic instead" in caplog.text
    assert CACHE_ENV_VAR in caplog.text
    exact = MiniLMEmbedder(quantize=False).embed(SENTENCES[:2])
    np.testing.assert_allclose(vectors, exact, atol=1e-5)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("", True), ("1", True), ("yes", True), ("0", False), ("false", False), ("OFF", False)],
)
def test_the_environment_switches_int8_off(
    value: str, expected: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(QUANTIZE_ENV_VAR, value)
    assert quantize_by_default() is expected
    assert MiniLMEmbedder().quantize is expected
    assert MiniLMEmbedder(quantize=True).quantize is True


def test_the_cache_lives_under_satchel_cache_dir_when_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    assert model_cache_dir() == tmp_path / "models"
    monkeypatch.delenv(CACHE_ENV_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_cache_dir() == tmp_path / "xdg" / "satchel" / "models"


def test_load_builds_the_copy_reporting_it_and_then_embeds_without_loading_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path))
    embedder = MiniLMEmbedder(quantize=True)
    steps: list[str] = []
    before = embedder.loaded
    embedder.load(steps.append)
    embedder.load(steps.append)  # loaded: nothing to do
    vectors = embedder.embed(["hello"])

    assert (before, embedder.loaded) == (False, True)
    assert steps == [BUILD_MESSAGE]
    assert vectors.shape == (1, 384)
    assert "first use only" in BUILD_MESSAGE
