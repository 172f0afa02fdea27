"""A turn stays bounded (issue 27): tool results cut to the budget, this turn's
messages kept whatever the history budget, requests that grow at most linearly while
results quote earlier results, and a model that repeats a call stopped. Scripted models
on a real SQLite memory store."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from satchel import SatchelUsageError, ToolRegistry, tool
from satchel.agent import (
    Agent,
    ChatMessage,
    ContextBudget,
    FunctionModel,
    ModelRequest,
    ModelResponse,
    TestModel,
    call,
    fit_history,
)
from satchel.cli import app
from satchel.memory import MemoryStore, SQLiteStore

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
QUESTION = "what did I plant in the garden?"
ran: list[str] = []


@tool
def lookup(query: str) -> str:
    """Look something up.

    Args:
        query: What to look up.
    """
    ran.append(query)
    return f"notes about {query}: " + "tomatoes basil fence sunlight " * 100


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[MemoryStore]:
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as opened:
        await opened.ensure_agent("ada")
        yield opened


def request_bytes(request: ModelRequest) -> int:
    """The request as JSON, the way a chat API receives it."""
    messages = [
        {
            "role": m.role,
            "content": m.content,
            "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in m.tool_calls],
            "tool_call_id": m.tool_call_id,
        }
        for m in request.messages
    ]
    body = {"system": request.system, "messages": messages, "tools": list(request.tools)}
    return len(json.dumps(body, ensure_ascii=False).encode())


def pairs_intact(messages: Sequence[ChatMessage]) -> bool:
    """Every tool result follows the assistant message that called it."""
    called: set[str | None] = set()
    for message in messages:
        if message.role == "tool" and message.tool_call_id not in called:
            return False
        called |= {c.id for c in message.tool_calls}
    return True


def searching(variations: int | None = None, *, tool: str = "search") -> FunctionModel:
    """Searches the conversations again and again, the query a little different each
    time (``variations``: only that many different queries, in turn); ``tool`` names
    another tool that takes a ``query``."""
    step = {"n": 0}

    def answer(request: ModelRequest) -> ModelResponse:
        step["n"] += 1
        n = step["n"] if variations is None else step["n"] % variations
        arguments: dict[str, object] = {"query": f"garden tomatoes basil {n}"}
        if tool == "search":
            arguments["domain"] = "conversations"
        return ModelResponse(tool_calls=(call(tool, arguments, id=f"c{step['n']}"),))

    return FunctionModel(answer)


async def seed_garden(store: MemoryStore) -> None:
    for n in range(5):
        await store.add_message("ada", "user", f"garden note {n}: tomatoes and basil by the fence")


async def test_a_tool_result_over_the_budget_is_cut_with_a_note_and_the_caller_keeps_it_whole(
    store: MemoryStore,
) -> None:
    model = TestModel([call("lookup", {"query": "garden"}), "Done."])
    budget = ContextBudget(tool_result_tokens=200)
    agent = Agent("ada", model, tools=ToolRegistry([lookup]), memory=store, budget=budget)
    result = await agent.run(QUESTION)

    whole = result.tool_calls[0][1].output
    seen = model.requests[1].messages[-1].content
    assert len(whole) > 3000
    assert len(seen) // 4 + 1 <= 200  # within the budget, counted as the agent counts
    assert seen.startswith(whole[:200])
    assert "Cut here: the whole result has" in seen
    assert "a narrower query, a smaller limit" in seen
    stored = [m for m in await store.list_messages("ada") if m.role == "tool"]
    assert [m.content for m in stored] == [seen]  # the conversation keeps what the model saw


async def test_a_result_within_the_budget_and_an_unbounded_budget_leave_results_whole(
    store: MemoryStore,
) -> None:
    for budget in (ContextBudget(), ContextBudget(tool_result_tokens=None)):
        model = TestModel([call("lookup", {"query": "garden"}), "Done."])
        tools = ToolRegistry([lookup])
        await Agent("ada", model, tools=tools, memory=store, budget=budget).run(QUESTION)
        assert model.requests[1].messages[-1].content.startswith("notes about garden")
        assert "Cut here" not in model.requests[1].messages[-1].content


async def test_the_persons_message_and_this_turns_calls_stay_in_every_request(
    store: MemoryStore,
) -> None:
    for n in range(30):
        await store.add_message("ada", "user", f"earlier message {n} about the weather " * 5)
    step = {"n": 0}

    def answer(request: ModelRequest) -> ModelResponse:
        step["n"] += 1
        if step["n"] > 8:
            return ModelResponse(text="Tomatoes.")
        return ModelResponse(tool_calls=(call("lookup", {"query": f"bed {step['n']}"}),))

    model = FunctionModel(answer)
    budget = ContextBudget(history_tokens=500, tool_result_tokens=200)
    agent = Agent("ada", model, tools=ToolRegistry([lookup]), memory=store, budget=budget)
    result = await agent.run(QUESTION)

    assert (result.stop, result.reply) == ("reply", "Tomatoes.")
    for n, request in enumerate(model.requests):
        contents = [m.content for m in request.messages]
        assert QUESTION in contents
        assert pairs_intact(request.messages)
        assert sum(1 for m in request.messages if m.role == "tool") == n  # every result
    assert "earlier message 0 " not in " ".join(m.content for m in model.requests[-1].messages)


async def test_a_turn_woken_by_a_stored_message_keeps_that_message_in_every_request(
    store: MemoryStore,
) -> None:
    for n in range(30):
        await store.add_message("ada", "assistant", f"earlier answer {n} about the weather " * 5)
    await store.add_message("ada", "user", QUESTION, metadata={"from": "agent:bob"})
    script = [call("lookup", {"query": f"bed {n}"}) for n in range(6)]
    model = TestModel([*script, "Tomatoes."])
    budget = ContextBudget(history_tokens=400, tool_result_tokens=200)
    agent = Agent("ada", model, tools=ToolRegistry([lookup]), memory=store, budget=budget)
    await agent.run(None)

    asked = f"[message from agent:bob] {QUESTION}"
    assert all(asked in [m.content for m in r.messages] for r in model.requests)
    assert all(pairs_intact(r.messages) for r in model.requests)


async def test_when_this_turn_alone_passes_the_budget_its_oldest_results_shrink_first(
    store: MemoryStore,
) -> None:
    script = [call("lookup", {"query": f"bed {n}"}) for n in range(6)]
    model = TestModel([*script, "Tomatoes."])
    budget = ContextBudget(history_tokens=600, tool_result_tokens=200)
    agent = Agent("ada", model, tools=ToolRegistry([lookup]), memory=store, budget=budget)
    await agent.run(QUESTION)

    results = [m.content for m in model.requests[-1].messages if m.role == "tool"]
    shrunk = [r for r in results if "left the prompt to keep this turn within its budget" in r]
    assert shrunk == results[: len(shrunk)]  # the oldest shrink first
    assert 0 < len(shrunk) < len(results)
    assert results[-1].startswith("notes about bed 5")  # the latest stays whole
    assert "Cut here" in results[-1]
    stored = [m.content for m in await store.list_messages("ada") if m.role == "tool"]
    assert not any("left the prompt" in s for s in stored)  # shrinking is for the request


async def test_requests_grow_at_most_linearly_while_results_quote_earlier_results(
    store: MemoryStore,
) -> None:
    # search no longer returns this turn's own results, so the tool that quotes them
    # is written here: it returns every earlier tool result of the conversation
    @tool
    async def recall_all(query: str) -> str:
        """Everything found so far.

        Args:
            query: What to look for.
        """
        earlier = [m.content for m in await store.list_messages("ada") if m.role == "tool"]
        return f"{query}: " + " | ".join(earlier)

    budget = ContextBudget(history_tokens=2_000, tool_result_tokens=400)
    slope = budget.tool_result_tokens * 4 + 600  # one whole result and one call a step
    sizes: dict[str, list[int]] = {}
    for name, used in (("bounded", budget), ("unbounded", ContextBudget(tool_result_tokens=None))):
        await seed_garden(store)
        model = searching(tool="recall_all")
        tools = ToolRegistry([recall_all])
        agent = Agent("ada", model, memory=store, tools=tools, budget=used, max_steps=10)
        await agent.run(QUESTION, conversation_id=name)
        sizes[name] = [request_bytes(r) for r in model.requests]

    bounded, unbounded = sizes["bounded"], sizes["unbounded"]
    assert len(bounded) == len(unbounded) == 10
    assert all(size <= bounded[0] + k * slope for k, size in enumerate(bounded))
    # without the cut, each result quotes the earlier ones and requests snowball
    assert any(size > unbounded[0] + k * slope for k, size in enumerate(unbounded))
    assert unbounded[-1] > 10 * bounded[-1]


async def test_the_third_identical_call_ends_the_turn_with_stop_repeated(
    store: MemoryStore,
) -> None:
    ran.clear()
    model = TestModel([call("lookup", {"query": "garden"})] * 50)
    agent = Agent("ada", model, tools=ToolRegistry([lookup]), memory=store)
    result = await agent.run(QUESTION)

    assert result.stop == "repeated"
    assert len(model.requests) == 3
    assert ran == ["garden", "garden"]  # the third did not run
    second = model.requests[2].messages[-1].content
    assert "You made this same call (lookup, same arguments) 2 times in this turn" in second
    error = result.tool_calls[2][1].error
    assert error is not None
    assert (error.kind, error.details["repeated"]) == ("denied", 3)
    stored = await store.list_messages("ada")
    assert [m.role for m in stored].count("tool") == 3  # every call has its result
    again = TestModel(["Hello again."])
    await Agent("ada", again, tools=ToolRegistry([lookup]), memory=store).run("hi")
    assert pairs_intact(again.requests[0].messages)


async def test_calls_with_the_same_arguments_in_another_order_are_identical(
    store: MemoryStore,
) -> None:
    first = {"query": "garden tomatoes", "domain": "conversations", "limit": 3}
    second = {"limit": 3, "domain": "conversations", "query": "garden tomatoes"}
    model = TestModel([call("search", first), call("search", second), call("search", first)])
    result = await Agent("ada", model, memory=store).run(QUESTION)
    assert result.stop == "repeated"
    assert len(model.requests) == 3


async def test_a_model_that_varies_its_search_ends_its_turn_in_bounded_requests(
    store: MemoryStore,
) -> None:
    await seed_garden(store)
    model = searching(variations=3)
    result = await Agent("ada", model, memory=store).run(QUESTION)
    assert result.stop == "repeated"  # the 7th request repeats the 1st query a third time
    assert len(model.requests) == 7
    budget = ContextBudget()
    assert max(map(request_bytes, model.requests)) < 8 * (budget.history_tokens + 2_000)


async def test_without_a_repeat_limit_a_repeating_model_runs_to_max_steps(
    store: MemoryStore,
) -> None:
    model = TestModel([call("lookup", {"query": "garden"})] * 50)
    budget = ContextBudget(repeat_limit=None)
    agent = Agent("ada", model, tools=ToolRegistry([lookup]), memory=store, budget=budget)
    result = await agent.run(QUESTION)
    assert (result.stop, len(model.requests)) == ("max_steps", 20)
    assert "same call" not in model.requests[-1].messages[-1].content


def test_budgets_too_small_to_work_are_refused() -> None:
    with pytest.raises(SatchelUsageError, match="tool_result_tokens"):
        ContextBudget(tool_result_tokens=10)
    with pytest.raises(SatchelUsageError, match="repeat_limit"):
        ContextBudget(repeat_limit=1)


def test_satchel_run_says_why_a_repeating_turn_stopped(tmp_path: Path) -> None:
    looping = f"{HERE / 'scripted_models.py'}:looping"
    done = CliRunner().invoke(
        app,
        ["run", "--db", str(tmp_path / "m.db"), "--agent", "ada", "--model", looping, "go"],
        catch_exceptions=False,
    )
    assert done.exit_code == 0, done.output
    assert "satchel: the turn stopped early (repeated)." in done.stderr


def test_fit_history_keeps_this_turn_whole_and_never_a_result_without_its_call() -> None:
    calling = ChatMessage(role="assistant", tool_calls=(call("lookup", {"query": "a"}, id="c1"),))
    result = ChatMessage(role="tool", content="x " * 400, tool_call_id="c1", name="lookup")
    history = [
        *(ChatMessage(role="user", content=f"old {n} " * 40) for n in range(10)),
        ChatMessage(role="user", content=QUESTION),
        calling,
        result,
    ]
    budget = ContextBudget(history_tokens=50)

    def count(text: str) -> int:
        return len(text) // 4 + 1

    kept, summary = fit_history(history, budget, count, turn_start=10)
    assert kept == history[10:]  # over the budget, and all kept
    assert "earlier messages of this conversation left the prompt" in summary
    assert fit_history(history, budget, count)[0] == kept  # by default, from the question
    from_result, _ = fit_history(history, budget, count, turn_start=12)
    assert from_result == history[11:]  # the result brought its call along
    unpinned, _ = fit_history(history[11:], budget, count)
    assert unpinned == history[11:]  # no question at all: still no result without its call
