"""The Anthropic provider through the real ``anthropic`` SDK, against a local server
that speaks the Messages wire format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agent.fake_anthropic import FakeAnthropic, error, message, scripted
from agent.fake_openai import free_port, serving
from satchel import ModelError
from satchel.agent import Agent, ChatMessage, ModelRequest, model_from_string
from satchel.agent._anthropic import AnthropicModel
from satchel.memory import SQLiteStore

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def _root(url: str) -> str:
    return url.removesuffix("/v1")


async def test_an_agent_runs_tool_calls_and_a_reply_over_the_messages_api(tmp_path: Path) -> None:
    append = {"operation": "append", "label": "human", "content": "Likes green tea."}
    listing = {"operation": "list"}
    steps = [
        message("Saving that.", calls=[("context", append), ("context", listing)]),
        message("Noted."),
    ]
    fake = FakeAnthropic(scripted(steps))
    with serving(fake) as url:
        async with SQLiteStore(tmp_path / "m.db", embedder=None) as store:
            await store.ensure_agent("ada")
            async with AnthropicModel("fake-claude", base_url=_root(url)) as model:
                with anyio.fail_after(60):
                    result = await Agent("ada", model, memory=store).run("I like green tea")
            human = await store.get_block("ada", "human")

    assert (result.stop, result.reply) == ("reply", "Noted.")
    assert human.value.endswith("Likes green tea.")
    assert result.usage.input_tokens == 26
    first, second = fake.requests
    assert "<memory agent=" in first["system"]
    assert {t["name"] for t in first["tools"]} == {"context", "recall", "search", "send_message"}
    assert "input_schema" in first["tools"][0]
    assert first["tool_choice"] == {"type": "auto"}
    turns: list[dict[str, Any]] = second["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]  # roles alternate
    kinds = [b["type"] for b in turns[1]["content"]]
    assert kinds == ["text", "tool_use", "tool_use"]
    results = turns[2]["content"]
    assert [b["type"] for b in results] == ["tool_result", "tool_result"]  # one user turn
    assert [b["tool_use_id"] for b in results] == [b["id"] for b in turns[1]["content"][1:]]


async def test_a_refused_key_and_a_too_long_prompt_are_model_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    too_long = error(400, "invalid_request_error", "prompt is too long: 300000 tokens > 200000")
    with serving(FakeAnthropic(lambda body: too_long)) as url:
        async with AnthropicModel("c", base_url=_root(url), max_retries=0) as model:
            with pytest.raises(ModelError, match="longer than") as long:
                await model.request(
                    ModelRequest(system="", messages=[ChatMessage(role="user", content="x")])
                )
        monkeypatch.setenv("ANTHROPIC_API_KEY", "wrong")
        async with AnthropicModel("c", base_url=_root(url), max_retries=0) as model:
            with pytest.raises(ModelError, match="refused the API key") as refused:
                await model.request(
                    ModelRequest(system="", messages=[ChatMessage(role="user", content="x")])
                )
    assert long.value.reason == "context_length"
    assert refused.value.reason == "auth"


async def test_an_unreachable_server_and_a_missing_key_are_clear(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    async with AnthropicModel("c", base_url=url, max_retries=0, timeout=5) as model:
        with anyio.fail_after(30), pytest.raises(ModelError, match="cannot reach"):
            await model.request(
                ModelRequest(system="", messages=[ChatMessage(role="user", content="x")])
            )
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
        model_from_string("anthropic:claude-sonnet-4-5")


async def test_a_streaming_agent_reads_the_messages_event_stream(tmp_path: Path) -> None:
    from satchel.agent import FinalEvent, TextDeltaEvent

    append = {"operation": "append", "label": "human", "content": "Likes green tea."}
    steps = [message(calls=[("context", append)]), message("Noted, green tea it is.")]
    fake = FakeAnthropic(scripted(steps))
    with serving(fake) as url:
        async with SQLiteStore(tmp_path / "m.db", embedder=None) as store:
            await store.ensure_agent("ada")
            async with AnthropicModel("fake-claude", base_url=_root(url)) as model:
                agent = Agent("ada", model, memory=store, stream=True)
                with anyio.fail_after(60):
                    events = [e async for e in agent.run_stream("I like green tea")]
            human = await store.get_block("ada", "human")

    deltas = [e.delta for e in events if isinstance(e, TextDeltaEvent)]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert len(deltas) > 1
    assert "".join(deltas) == "Noted, green tea it is."
    assert final.result.reply == "Noted, green tea it is."
    assert (final.result.usage.input_tokens, final.result.usage.output_tokens) == (26, 10)
    assert human.value.endswith("Likes green tea.")
    assert all(r["stream"] is True for r in fake.requests)
