"""How long a model request may take, and what is tried again, through the real
``openai`` and ``anthropic`` SDKs: a silent server fails in ``timeout`` seconds (once,
not once per retry), a refused connection fails at once, a server error is retried and
a bad request is not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from agent import fake_anthropic
from agent.fake_openai import FakeOpenAI, completion, error, free_port, serving, silent_server
from satchel import ModelError, SatchelUsageError
from satchel.agent import ChatMessage, ModelRequest
from satchel.agent._anthropic import AnthropicModel
from satchel.agent._model_clients import OpenAIModel

pytestmark = pytest.mark.anyio

REQUEST = ModelRequest(system="", messages=[ChatMessage(role="user", content="Hello?")])


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for provider in ("OPENAI", "ANTHROPIC"):
        monkeypatch.setenv(f"{provider}_API_KEY", "test-key")
        monkeypatch.delenv(f"{provider}_BASE_URL", raising=False)


def _openai(url: str, **options: Any) -> OpenAIModel | AnthropicModel:
    return OpenAIModel("fake-model", base_url=url, **options)


def _anthropic(url: str, **options: Any) -> OpenAIModel | AnthropicModel:
    return AnthropicModel("fake-claude", base_url=url.removesuffix("/v1"), **options)


async def _answer(model: OpenAIModel | AnthropicModel, *, stream: bool) -> None:
    if not stream:
        await model.request(REQUEST)
        return
    async for _ in model.stream(REQUEST):
        pass


PROVIDERS = pytest.mark.parametrize("make", [_openai, _anthropic], ids=["openai", "anthropic"])


@PROVIDERS
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_silent_server_fails_once_its_timeout_has_passed(
    make: Callable[..., OpenAIModel | AnthropicModel], stream: bool
) -> None:
    with silent_server() as url:
        async with make(url, timeout=1) as model:
            with anyio.fail_after(30), pytest.raises(ModelError) as caught:
                await _answer(model, stream=stream)

    assert caught.value.reason == "timeout"
    assert caught.value.message.startswith(f"{model.base_url} did not answer within 1 s")
    assert "--timeout" in caught.value.message


@PROVIDERS
async def test_a_stream_that_goes_silent_midway_fails_once_its_timeout_has_passed(
    make: Callable[..., OpenAIModel | AnthropicModel],
) -> None:
    with silent_server(starts=True) as url:
        async with make(url, timeout=1) as model:
            with anyio.fail_after(30), pytest.raises(ModelError) as caught:
                await _answer(model, stream=True)

    assert caught.value.reason == "timeout"
    assert caught.value.message.startswith(f"{model.base_url} went silent midway")


@PROVIDERS
async def test_a_refused_connection_fails_at_once_without_retries(
    make: Callable[..., OpenAIModel | AnthropicModel],
) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    async with make(url, max_retries=5) as model:
        with anyio.fail_after(30), pytest.raises(ModelError) as caught:
            await model.request(REQUEST)

    assert caught.value.reason == "connection"
    assert f"cannot reach {model.base_url}: connection refused" in caught.value.message


async def test_a_server_error_is_tried_again_and_a_bad_request_is_not() -> None:
    answers = iter([error(503, "Overloaded."), (200, completion("Hello!"))])
    flaky = FakeOpenAI(lambda body: next(answers))
    refusing = FakeOpenAI(lambda body: error(400, "Unknown parameter."))
    with serving(flaky) as flaky_url, serving(refusing) as refusing_url:
        async with _openai(flaky_url) as model:
            with anyio.fail_after(30):
                reply = await model.request(REQUEST)
        async with _openai(refusing_url) as model:
            with anyio.fail_after(30), pytest.raises(ModelError) as caught:
                await model.request(REQUEST)

    assert reply.text == "Hello!"
    assert len(flaky.requests) == 2
    assert caught.value.reason == "bad_request"
    assert len(refusing.requests) == 1


async def test_an_anthropic_overload_is_tried_again() -> None:
    answers = iter(
        [
            fake_anthropic.error(529, "overloaded_error", "Overloaded."),
            (200, fake_anthropic.message("Hello!")),
        ]
    )
    fake = fake_anthropic.FakeAnthropic(lambda body: next(answers))
    with serving(fake) as url:
        async with _anthropic(url) as model:
            with anyio.fail_after(30):
                reply = await model.request(REQUEST)

    assert reply.text == "Hello!"
    assert len(fake.requests) == 2


@pytest.mark.parametrize("options", [{"timeout": 0}, {"max_retries": -1}])
def test_a_timeout_or_retry_count_out_of_range_is_a_usage_error(options: dict[str, Any]) -> None:
    with pytest.raises(SatchelUsageError):
        _openai("http://127.0.0.1:1/v1", **options)
