"""The agent runtime with scripted models on a real SQLite memory store: the loop,
the tool rules, persistence and resumption, the context budget."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from satchel import SatchelUsageError, ToolContext, ToolRegistry, tool
from satchel.agent import (
    Agent,
    ApprovalEvent,
    ContextBudget,
    FinalEvent,
    FunctionModel,
    ModelRequest,
    ModelResponse,
    TestModel,
    ToolCallEvent,
    call,
)
from satchel.consent import InMemoryApprovalStore, PermissionBroker, with_approval
from satchel.memory import Domain, MemoryStore, SQLiteStore
from satchel.providers import ToolCall
from satchel.rules import (
    AllowedChildren,
    Conditional,
    Continue,
    Init,
    MaxCalls,
    RequiredBeforeExit,
)

pytestmark = pytest.mark.anyio

APPEND = {"operation": "append", "label": "human", "content": "Likes green tea."}
TO_USER = {"target": {"type": "user"}, "content": "Noted!"}


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[MemoryStore]:
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as opened:
        await opened.ensure_agent("ada")
        yield opened


async def test_a_memory_edit_continues_the_turn_and_send_message_ends_it(
    store: MemoryStore,
) -> None:
    model = TestModel([call("context", APPEND), call("send_message", TO_USER), "never asked"])
    result = await Agent("ada", model, memory=store).run("Remember that I like green tea")

    assert (result.stop, result.reply) == ("terminal", "Noted!")
    assert [c.name for c, _ in result.tool_calls] == ["context", "send_message"]
    assert all(r.ok for _, r in result.tool_calls)
    assert len(model.requests) == 2
    assert (await store.get_block("ada", "human")).value.endswith("Likes green tea.")
    assert "<memory agent=" in model.requests[1].system
    assert "Likes green tea." in model.requests[1].system  # memory re-rendered each step
    assert "Calling send_message ends your turn." in model.requests[0].system


async def test_the_users_message_and_the_tool_calls_are_searchable_afterwards(
    store: MemoryStore,
) -> None:
    model = TestModel([call("context", APPEND), "Done."])
    await Agent("ada", model, memory=store).run("Please remember my favourite tea")
    hits = await store.search("ada", "favourite tea", domains=Domain.CONVERSATIONS, mode="bm25")
    roles = {h.text: h for h in hits}
    assert "Please remember my favourite tea" in roles
    stored = await store.list_messages("ada")
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[1].metadata["tool_calls"][0]["name"] == "context"


async def test_a_second_agent_on_the_same_store_resumes_the_conversation(
    store: MemoryStore,
) -> None:
    await Agent("ada", TestModel([call("context", APPEND), "Noted."]), memory=store).run(
        "I like green tea"
    )
    later = TestModel(["You like green tea."])
    result = await Agent("ada", later, memory=store).run("What do I like?")
    seen = [(m.role, m.content) for m in later.requests[0].messages]
    assert seen[0] == ("user", "I like green tea")
    assert seen[-1] == ("user", "What do I like?")
    assert [m.role for m in later.requests[0].messages] == [
        "user", "assistant", "tool", "assistant", "user"
    ]  # fmt: skip
    assert later.requests[0].messages[1].tool_calls[0].name == "context"
    assert result.reply == "You like green tea."


async def test_another_conversation_does_not_see_the_first(store: MemoryStore) -> None:
    await Agent("ada", TestModel(["ok"]), memory=store).run("secret plan")
    other = TestModel(["fresh"])
    await Agent("ada", other, memory=store).run("hello", conversation_id="work")
    assert [m.content for m in other.requests[0].messages] == ["hello"]


async def test_max_calls_stops_a_looping_model(store: MemoryStore) -> None:
    loop = [call("search", {"query": f"green tea {n}"}) for n in range(50)]
    model = TestModel(loop)
    result = await Agent("ada", model, memory=store, rules=[MaxCalls(3)]).run("go")
    ran = [r for _, r in result.tool_calls if r.ok]
    refused = [r for _, r in result.tool_calls if not r.ok]
    assert len(ran) == 3
    assert result.stop == "rules"
    assert refused[0].error is not None
    assert refused[0].error.kind == "denied"
    assert model.requests[-1].tools == []  # nothing was offered once the limit was hit


async def test_the_step_limit_bounds_every_run(store: MemoryStore) -> None:
    model = TestModel([call("search", {"query": f"green tea {n}"}) for n in range(50)])
    result = await Agent("ada", model, memory=store, max_steps=4).run("go")
    assert result.stop == "max_steps"
    assert len(model.requests) == 4


async def test_a_call_the_rules_do_not_allow_is_refused_and_not_run(store: MemoryStore) -> None:
    rules = [AllowedChildren("search", ["send_message"])]
    model = TestModel(
        [
            call("search", {"domain": "all", "query": "tea"}),
            call("context", APPEND),
            call("send_message", TO_USER),
        ]
    )
    result = await Agent("ada", model, memory=store, rules=rules).run("tea?")
    context_result = result.tool_calls[1][1]
    assert context_result.error is not None
    assert context_result.error.kind == "denied"
    assert "send_message" in context_result.error.message
    assert model.requests[1].tool_names == ["send_message"]
    assert model.requests[1].require_tool is True
    assert not (await store.get_block("ada", "human")).value.endswith("green tea.")


async def test_required_before_exit_sends_the_model_back(store: MemoryStore) -> None:
    model = TestModel(["All done.", call("context", APPEND), "Now done."])
    rules = [RequiredBeforeExit("context")]
    result = await Agent("ada", model, memory=store, rules=rules).run("remember tea")
    assert result.reply == "Now done."
    assert "Call context before you finish your turn." in model.requests[1].messages[-1].content
    stored = await store.list_messages("ada")
    assert "system" in [m.role for m in stored]


async def test_init_with_arguments_is_called_by_the_runtime_first(store: MemoryStore) -> None:
    model = TestModel(["Hi."])
    rules = [Init("context", {"operation": "list"})]
    result = await Agent("ada", model, memory=store, rules=rules).run("hello")
    assert [c.name for c, _ in result.tool_calls] == ["context"]
    assert model.requests[0].messages[-1].role == "tool"


async def test_init_without_arguments_offers_only_that_tool_first(store: MemoryStore) -> None:
    model = TestModel([call("context", {"operation": "list"}), "Hi."])
    await Agent("ada", model, memory=store, rules=[Init("context")]).run("hello")
    assert model.requests[0].tool_names == ["context"]
    assert len(model.requests[1].tool_names) == 4


async def test_continue_overrides_the_default_terminal_send_message(store: MemoryStore) -> None:
    model = TestModel([call("send_message", TO_USER), "And one more thing."])
    result = await Agent("ada", model, memory=store, rules=[Continue("send_message")]).run("hi")
    assert (result.stop, result.reply) == ("reply", "And one more thing.")


async def test_conditional_picks_the_next_tool_from_the_output() -> None:
    @tool
    def classify(text: str) -> dict[str, str]:
        """Classify a request."""
        return {"kind": "math" if any(c.isdigit() for c in text) else "chat"}

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @tool
    def chat(text: str) -> str:
        """Chat."""
        return text

    rules = [Conditional("classify", {"math": "add", "chat": "chat"}, field="kind")]
    model = TestModel([call("classify", {"text": "2+2"}), call("add", {"a": 2, "b": 2}), "4"])
    agent = Agent("ada", model, tools=ToolRegistry([classify, add, chat]), rules=rules)
    result = await agent.run("2+2?")
    assert model.requests[1].tool_names == ["add"]
    assert result.reply == "4"


async def test_a_call_that_needs_approval_pauses_the_run_with_an_event() -> None:
    wiped: list[str] = []

    @tool(destructive=True)
    def wipe(path: str) -> str:
        """Delete a file."""
        wiped.append(path)
        return "gone"

    async with PermissionBroker(InMemoryApprovalStore()) as broker:
        tools = with_approval(ToolRegistry([wipe]), broker)
        model = TestModel([call("wipe", {"path": "a.txt"}), "never"])
        events = [e async for e in Agent("ada", model, tools=tools).run_stream("wipe a.txt")]
        pending = await broker.pending()

    approvals = [e for e in events if isinstance(e, ApprovalEvent)]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.stop == "needs_approval"
    assert final.result.pending_approvals == [approvals[0].approval_id] == [pending[0].id]
    assert wiped == []
    assert [e.call.name for e in events if isinstance(e, ToolCallEvent)] == ["wipe"]


async def test_old_history_leaves_the_prompt_and_a_summary_stands_in(
    store: MemoryStore,
) -> None:
    for index in range(30):
        await store.add_message("ada", "user", f"message number {index} about the garden")
    model = TestModel(["ok"])
    budget = ContextBudget(history_tokens=120, summary_tokens=80)
    await Agent("ada", model, memory=store, budget=budget).run("and now?")
    request = model.requests[0]
    assert request.messages[-1].content == "and now?"
    assert len(request.messages) < 31
    assert "earlier messages of this conversation left the prompt" in request.system
    assert "message number 0 " not in " ".join(m.content for m in request.messages)


def test_a_function_model_sees_each_request_and_run_sync_works() -> None:
    def answer(request: ModelRequest) -> ModelResponse:
        return ModelResponse(text=f"{len(request.messages)} message(s)")

    agent = Agent("ada", FunctionModel(answer))
    assert agent.run_sync("one").reply == "1 message(s)"
    assert agent.run_sync("two").reply == "3 message(s)"  # history lives in the agent


async def test_run_sync_refuses_to_nest_in_a_running_loop() -> None:
    agent = Agent("ada", TestModel(["x"]))
    with pytest.raises(SatchelUsageError, match="event loop"):
        agent.run_sync("hi")


def test_bad_settings_are_usage_errors() -> None:
    with pytest.raises(SatchelUsageError, match="max_steps"):
        Agent("ada", TestModel(), max_steps=0)
    with pytest.raises(SatchelUsageError, match="at least 1"):
        MaxCalls(0)


async def test_the_run_record_is_json_ready(store: MemoryStore) -> None:
    import json

    result = await Agent("ada", TestModel([call("context", APPEND), "ok"]), memory=store).run("x")
    record: dict[str, Any] = json.loads(json.dumps(result.to_dict()))
    assert record["stop"] == "reply"
    assert record["tool_calls"][0]["name"] == "context"
    assert record["usage"]["requests"] == 0  # a scripted model reports no usage


async def test_a_paused_run_resumes_once_a_human_approves_and_the_call_runs_once() -> None:
    from satchel.consent import Decision

    wiped: list[str] = []

    @tool(destructive=True)
    def wipe(path: str) -> str:
        """Delete a file."""
        wiped.append(path)
        return "gone"

    async with PermissionBroker(InMemoryApprovalStore()) as broker:
        tools = with_approval(ToolRegistry([wipe]), broker)
        model = TestModel([call("wipe", {"path": "a.txt"}), "Deleted a.txt."])
        agent = Agent("ada", model, tools=tools)
        paused = await agent.run("wipe a.txt")
        await broker.resolve(paused.pending_approvals[0], Decision.approve_once(), by="human")
        resumed = await agent.resume(paused)
        with pytest.raises(SatchelUsageError, match="needs_approval"):
            await agent.resume(resumed)

    assert paused.stop == "needs_approval"
    assert wiped == ["a.txt"]
    assert (resumed.stop, resumed.reply) == ("reply", "Deleted a.txt.")
    messages = model.requests[-1].messages
    assert [m.role for m in messages][-2:] == ["assistant", "tool"]
    assert messages[-1].content.strip('"') == "gone"


async def test_a_denied_approval_resumes_with_a_denied_result_and_nothing_runs() -> None:
    from satchel.consent import Decision

    wiped: list[str] = []

    @tool(destructive=True)
    def wipe(path: str) -> str:
        """Delete a file."""
        wiped.append(path)
        return "gone"

    async with PermissionBroker(InMemoryApprovalStore()) as broker:
        model = TestModel([call("wipe", {"path": "a.txt"}), "Not deleted."])
        agent = Agent("ada", model, tools=with_approval(ToolRegistry([wipe]), broker))
        paused = await agent.run("wipe a.txt")
        await broker.resolve(paused.pending_approvals[0], Decision.deny(), by="human")
        resumed = await agent.resume(paused)

    assert wiped == []
    [(_, result)] = resumed.tool_calls
    assert result.error is not None
    assert result.error.kind == "denied"
    assert resumed.reply == "Not deleted."


async def test_a_model_written_running_summary_is_stored_and_extended_later(
    store: MemoryStore,
) -> None:
    for index in range(30):
        await store.add_message("ada", "user", f"message number {index} about the garden")
    summaries: list[str] = []

    def answer(request: ModelRequest) -> ModelResponse:
        if "running summary" in request.system:
            summaries.append(request.messages[0].content)
            return ModelResponse(text=f"SUMMARY {len(summaries)}")
        return ModelResponse(text="ok")

    budget = ContextBudget(history_tokens=120, summarizer="model")
    first = FunctionModel(answer)
    await Agent("ada", first, memory=store, budget=budget).run("and now?")
    second = FunctionModel(answer)
    await Agent("ada", second, memory=store, budget=budget).run("and later?")

    assert "## Earlier in this conversation\nSUMMARY 1" in first.requests[-1].system
    assert "## Earlier in this conversation\nSUMMARY 2" in second.requests[-1].system
    assert len(summaries) == 2
    assert "message number 0 " in summaries[0]
    assert summaries[1].startswith("Summary so far:\nSUMMARY 1")
    assert "message number 0 " not in summaries[1]  # only what left since then
    stored = [m for m in await store.list_messages("ada") if m.role == "system"]
    assert [m.content for m in stored] == ["SUMMARY 1", "SUMMARY 2"]
    seen = [m.content for m in second.requests[-1].messages]
    assert not any(c.startswith("SUMMARY") for c in seen)


def _one_reply_then_done(*calls: ToolCall) -> FunctionModel:
    replies = iter([ModelResponse(tool_calls=calls)])

    def answer(request: ModelRequest) -> ModelResponse:
        return next(replies, ModelResponse(text="done"))

    return FunctionModel(answer)


async def test_max_calls_holds_within_one_reply_of_parallel_calls(store: MemoryStore) -> None:
    ran: list[int] = []

    @tool
    def bump(n: int) -> int:
        """Count a call."""
        ran.append(n)
        return n

    calls = [ToolCall(f"c{n}", "bump", {"n": n}) for n in range(30)]
    agent = Agent(
        "ada", _one_reply_then_done(*calls), tools=ToolRegistry([bump]), rules=[MaxCalls(5)]
    )
    result = await agent.run("go")

    assert ran == [0, 1, 2, 3, 4]
    denied = [r for _, r in result.tool_calls if not r.ok]
    assert len(denied) == 25
    assert all(r.error is not None and r.error.kind == "denied" for r in denied)
    assert "at most 5" in denied[0].error.message  # type: ignore[union-attr]


async def test_calls_after_a_terminal_tool_in_the_same_reply_do_not_run(
    store: MemoryStore,
) -> None:
    ran: list[int] = []

    @tool
    def bump(n: int) -> int:
        """Count a call."""
        ran.append(n)
        return n

    model = _one_reply_then_done(
        ToolCall("s", "send_message", TO_USER),
        ToolCall("b1", "bump", {"n": 1}),
        ToolCall("b2", "bump", {"n": 2}),
    )
    result = await Agent("ada", model, memory=store, tools=ToolRegistry([bump])).run("go")

    assert (result.stop, result.reply) == ("terminal", "Noted!")
    assert ran == []
    after = [r for c, r in result.tool_calls if c.name == "bump"]
    assert [r.error.kind for r in after if r.error is not None] == ["denied", "denied"]
    assert "send_message" in after[0].error.message  # type: ignore[union-attr]
    stored = await store.list_messages("ada")
    assert sum(1 for m in stored if m.role == "tool") == 3  # every call has its result


async def test_a_turn_run_with_an_origin_gives_every_tool_call_that_origin() -> None:
    seen: list[str | None] = []

    @tool
    def where(ctx: ToolContext) -> str:
        """Say where the request came from."""
        seen.append(ctx.origin)
        return "ok"

    model = TestModel([call("where", {}), "done", call("where", {}), "done"])
    agent = Agent("ada", model, tools=ToolRegistry([where]))
    await agent.run("hi", origin="telegram:123456789", conversation_id="telegram:123456789")
    await agent.run("hi again")
    assert seen == ["telegram:123456789", "agent:ada"]
