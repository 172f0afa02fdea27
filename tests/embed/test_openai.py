"""The provider embedder through the official ``openai`` SDK, against a local server
speaking OpenAI's embeddings wire format (:mod:`embed.fake_embeddings`)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator

import numpy as np
import pytest

from agent.fake_openai import serving, silent_server
from embed.fake_embeddings import FakeEmbeddings, bag_of_words
from satchel import EmbeddingError, SatchelUsageError
from satchel.embed import OpenAIEmbedder, embedder_from_spec, openai_embedder


@pytest.fixture
def fake() -> FakeEmbeddings:
    return FakeEmbeddings(dim=64)


@pytest.fixture
def url(fake: FakeEmbeddings) -> Iterator[str]:
    with serving(fake) as base:
        yield base


def test_vectors_are_the_servers_in_order_and_unit_length(fake: FakeEmbeddings, url: str) -> None:
    embedder = openai_embedder("fake-embed", base_url=url)
    texts = ["otters hold hands", "penguins cannot fly", ""]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, 64)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    for row, text in zip(vectors, texts, strict=True):
        np.testing.assert_allclose(row, bag_of_words(text or " ", 64), atol=1e-6)


def test_an_unknown_models_size_is_asked_of_the_server_once(fake: FakeEmbeddings, url: str) -> None:
    embedder = openai_embedder("fake-embed", base_url=url)
    assert not embedder.loaded
    assert embedder.dim == 64
    assert embedder.dim == 64
    assert len(fake.requests) == 1
    assert embedder.name == "openai:fake-embed"


def test_openais_own_models_need_no_request_for_their_size() -> None:
    embedder = OpenAIEmbedder("text-embedding-3-small", api_key="sk-test")
    assert embedder.loaded
    assert embedder.dim == 1536
    assert OpenAIEmbedder("text-embedding-3-large", api_key="sk-test", dimensions=256).dim == 256


def test_many_texts_go_in_requests_of_batch_size(fake: FakeEmbeddings, url: str) -> None:
    embedder = OpenAIEmbedder("fake-embed", base_url=url, batch_size=2)
    vectors = embedder.embed([f"text number {i}" for i in range(5)])
    assert vectors.shape == (5, 64)
    assert [len(body["input"]) for body in fake.requests[-3:]] == [2, 2, 1]


def test_a_429_with_retry_after_is_retried_by_the_sdk(fake: FakeEmbeddings, url: str) -> None:
    embedder = OpenAIEmbedder("fake-embed", base_url=url, dimensions=64, max_retries=3)
    fake.rate_limits = 2
    assert embedder.embed(["kiwis are birds"]).shape == (1, 64)
    assert fake.limited == 2
    assert len(fake.requests) == 1


def test_rate_limits_past_the_retries_are_one_line_naming_the_server(
    fake: FakeEmbeddings, url: str
) -> None:
    embedder = OpenAIEmbedder("fake-embed", base_url=url, dimensions=64, max_retries=1)
    fake.rate_limits = 5
    with pytest.raises(EmbeddingError) as caught:
        embedder.embed(["kiwis"])
    assert caught.value.message == f"{url} kept rate-limiting: Rate limit reached; try again."


def test_an_unknown_model_is_reported_with_the_servers_words(url: str) -> None:
    embedder = OpenAIEmbedder("no-such-model", base_url=url, dimensions=64, max_retries=0)
    with pytest.raises(
        EmbeddingError, match=re.escape("does not exist. (is the model name right?)")
    ):
        embedder.embed(["x"])


def test_a_server_error_is_one_line(fake: FakeEmbeddings, url: str) -> None:
    embedder = OpenAIEmbedder("fake-embed", base_url=url, dimensions=64, max_retries=0)
    fake.fail_after = 0
    with pytest.raises(EmbeddingError) as caught:
        embedder.embed(["x"])
    assert caught.value.message == f"{url} failed (500): The server had an error."


def test_a_refused_key_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeEmbeddings(dim=8, key="right-key")
    monkeypatch.setenv("SATCHEL_EMBED_API_KEY", "wrong-key")
    with serving(fake) as url:
        embedder = OpenAIEmbedder("fake-embed", base_url=url, dimensions=8)
        with pytest.raises(EmbeddingError, match="refused the API key"):
            embedder.embed(["x"])


def test_the_key_comes_from_satchel_embed_api_key_before_openai_api_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = FakeEmbeddings(dim=8, key="embed-key")
    monkeypatch.setenv("OPENAI_API_KEY", "chat-key")
    monkeypatch.setenv("SATCHEL_EMBED_API_KEY", "embed-key")
    with serving(fake) as url:
        assert openai_embedder("fake-embed", base_url=url).embed(["x"]).shape == (1, 8)
    monkeypatch.delenv("SATCHEL_EMBED_API_KEY")
    fake.key = "chat-key"
    with serving(fake) as url:
        assert openai_embedder("fake-embed", base_url=url).embed(["x"]).shape == (1, 8)


def test_an_unreachable_server_is_one_line() -> None:
    embedder = OpenAIEmbedder(
        "m", base_url="http://127.0.0.1:9/v1", dimensions=8, max_retries=0, timeout=5
    )
    with pytest.raises(EmbeddingError, match=re.escape("cannot reach http://127.0.0.1:9/v1")):
        embedder.embed(["x"])


def test_a_silent_server_times_out() -> None:
    with silent_server() as url:
        embedder = OpenAIEmbedder("m", base_url=url, dimensions=8, max_retries=0, timeout=1)
        with pytest.raises(EmbeddingError, match="did not answer in time"):
            embedder.embed(["x"])


def test_openais_own_server_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("SATCHEL_EMBED_API_KEY", raising=False)
    with pytest.raises(SatchelUsageError, match="SATCHEL_EMBED_API_KEY or OPENAI_API_KEY"):
        openai_embedder("text-embedding-3-small")
    local = openai_embedder("nomic-embed-text", base_url="http://127.0.0.1:9/v1")
    assert local.base_url == "http://127.0.0.1:9/v1"  # a local server needs no key


def test_without_the_openai_package_the_error_says_which_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # as if not installed
    with pytest.raises(SatchelUsageError) as caught:
        openai_embedder("text-embedding-3-small", api_key="sk-test")
    assert caught.value.message == (
        "openai: embedders need the openai package: pip install 'satchel[openai]'."
    )


def test_specs_name_the_bundled_model_a_provider_or_none(url: str) -> None:
    assert embedder_from_spec("none") is None
    provider = embedder_from_spec("openai:fake-embed", base_url=url)
    assert isinstance(provider, OpenAIEmbedder)
    assert provider.base_url == url
    with pytest.raises(SatchelUsageError, match="not an embedder satchel knows"):
        embedder_from_spec("cohere:embed-v3")
    with pytest.raises(SatchelUsageError, match="not an embedder satchel knows"):
        embedder_from_spec("bert")
    with pytest.raises(SatchelUsageError, match="a base URL is for an openai:MODEL embedder"):
        embedder_from_spec("default", base_url=url)
    with pytest.raises(SatchelUsageError, match="model name is needed"):
        embedder_from_spec("openai:", base_url=url)


def test_vectors_of_another_size_than_the_models_are_refused() -> None:
    fake = FakeEmbeddings(dim=64, model="text-embedding-3-small")
    with serving(fake) as url:
        embedder = OpenAIEmbedder("text-embedding-3-small", base_url=url)
        with pytest.raises(EmbeddingError) as caught:
            embedder.embed(["x"])
    assert caught.value.message == (
        f"{url} returned vectors of 64 dimensions for text-embedding-3-small, expected 1536"
    )
