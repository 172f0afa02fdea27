"""The OpenAI provider through the real ``openai`` SDK, against a local server that
speaks the Chat Completions wire format."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent.fake_openai import FakeOpenAI, completion, error, free_port, scripted, serving
from satchel import ModelError, SatchelUsageError
from satchel.agent import Agent, ChatMessage, ModelRequest, model_from_string
from satchel.agent._model_clients import OpenAIModel
from satchel.memory import SQLiteStore

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


async def test_an_agent_runs_a_tool_call_and_a_reply_over_the_wire(tmp_path: Path) -> None:
    append = {"operation": "append", "label": "human", "content": "Likes green tea."}
    fake = FakeOpenAI(scripted([completion(calls=[("context", append)]), completion("Noted.")]))
    with serving(fake) as url:
        async with SQLiteStore(tmp_path / "m.db", embedder=None) as store:
            await store.ensure_agent("ada")
            async with OpenAIModel("fake-model", base_url=url) as model:
                with anyio.fail_after(60):
                    result = await Agent("ada", model, memory=store).run("I like green tea")
            human = await store.get_block("ada", "human")

    assert (result.stop, result.reply) == ("reply", "Noted.")
    assert human.value.endswith("Likes green tea.")
    assert result.usage.requests == 2
    assert result.usage.input_tokens == 22
    first, second = fake.requests
    assert first["model"] == "fake-model"
    assert first["messages"][0]["role"] == "system"
    assert {t["function"]["name"] for t in first["tools"]} == {
        "context", "recall", "search", "send_message"
    }  # fmt: skip
    assert first["tool_choice"] == "auto"
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    assert second["messages"][2]["tool_calls"][0]["function"]["name"] == "context"
    assert second["messages"][3]["tool_call_id"] == second["messages"][2]["tool_calls"][0]["id"]


async def test_a_refused_key_is_a_model_error_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "wrong")
    with serving(FakeOpenAI(scripted([completion("x")]))) as url:
        async with OpenAIModel("fake-model", base_url=url, max_retries=0) as model:
            with pytest.raises(ModelError, match="refused the API key") as caught:
                await model.request(ModelRequest(system="", messages=[ChatMessage(role="user")]))
    assert caught.value.reason == "auth"


async def test_a_context_length_error_is_named() -> None:
    too_long = error(
        400, "This model's maximum context length is 8 tokens.", "context_length_exceeded"
    )
    fake = FakeOpenAI(lambda body: too_long)
    with serving(fake) as url:
        async with OpenAIModel("fake-model", base_url=url, max_retries=0) as model:
            with pytest.raises(ModelError, match="longer than") as caught:
                await model.request(ModelRequest(system="", messages=[ChatMessage(role="user")]))
    assert caught.value.reason == "context_length"


async def test_an_unreachable_server_is_a_connection_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    async with OpenAIModel("fake-model", base_url=url, max_retries=0, timeout=5) as model:
        with anyio.fail_after(30), pytest.raises(ModelError, match="cannot reach") as caught:
            await model.request(ModelRequest(system="", messages=[ChatMessage(role="user")]))
    assert caught.value.reason == "connection"


def test_a_missing_key_and_bad_model_strings_are_clear(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ModelError, match="OPENAI_API_KEY"):
        model_from_string("openai:gpt-4o-mini")
    with pytest.raises(SatchelUsageError, match="PROVIDER:MODEL"):
        model_from_string("gpt-4o-mini")
    with pytest.raises(SatchelUsageError, match="Unknown model provider"):
        model_from_string("mystery:model")


async def test_a_streaming_agent_yields_text_deltas_over_server_sent_events(
    tmp_path: Path,
) -> None:
    from satchel.agent import FinalEvent, TextDeltaEvent, TextEvent

    append = {"operation": "append", "label": "human", "content": "Likes green tea."}
    steps = [completion(calls=[("context", append)]), completion("Noted, you like green tea.")]
    fake = FakeOpenAI(scripted(steps))
    with serving(fake) as url:
        async with SQLiteStore(tmp_path / "m.db", embedder=None) as store:
            await store.ensure_agent("ada")
            async with OpenAIModel("fake-model", base_url=url) as model:
                agent = Agent("ada", model, memory=store, stream=True)
                with anyio.fail_after(60):
                    events = [e async for e in agent.run_stream("I like green tea")]
            human = await store.get_block("ada", "human")

    deltas = [e.delta for e in events if isinstance(e, TextDeltaEvent)]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert len(deltas) > 1
    assert "".join(deltas) == "Noted, you like green tea."
    assert [e.text for e in events if isinstance(e, TextEvent)] == ["Noted, you like green tea."]
    assert final.result.reply == "Noted, you like green tea."
    assert final.result.usage.input_tokens == 22
    assert human.value.endswith("Likes green tea.")  # the streamed tool call was assembled
    assert all(r["stream"] is True for r in fake.requests)
