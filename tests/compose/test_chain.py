"""Chains: tools made of tools, checked at registration, run step by step."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from satchel import (
    SatchelUsageError,
    ToolContext,
    ToolFailed,
    ToolRegistry,
    ToolRetry,
    chain,
    step,
    tool,
)
from satchel.compose import MAX_ITEMS, ChainTool, Fallback
from satchel.consent import Decision, PermissionBroker, with_approval

from .helpers import escalate, support_registry

pytestmark = pytest.mark.anyio


def _triage(**options: Any) -> ChainTool:
    return chain(
        "triage",
        "fetch_ticket",
        step("classify", map={"text": "body"}),
        step("escalate", when="label == 'urgent'"),
        description="Fetch a ticket, classify it, and escalate it when it is urgent.",
        **options,
    )


async def test_a_three_step_chain_flows_by_name_and_mapping_and_runs_its_condition() -> None:
    registry = support_registry()
    registry.register(_triage())

    urgent = await registry.call("triage", {"ticket_id": 3})
    normal = await registry.call("triage", {"ticket_id": 4})

    assert urgent.ok, urgent.error
    assert urgent.output == {"escalated": "ticket 3 (urgent)"}
    # the condition was false: escalate never ran, the last step that ran answers
    assert normal.output == {"label": "normal"}


async def test_the_chain_input_is_what_no_earlier_step_gives() -> None:
    registry = support_registry()
    spec = registry.register(_triage()).spec

    assert spec.input_schema["properties"] == {
        "ticket_id": {"type": "integer", "description": "The ticket's number."}
    }
    assert spec.input_schema["required"] == ["ticket_id"]
    assert "3. escalate, only if label == 'urgent'" in spec.description


async def test_bad_chain_arguments_are_invalid_arguments_before_any_step_runs() -> None:
    registry = support_registry()
    registry.register(_triage())
    result = await registry.call("triage", {"ticket": 3})
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert "ticket_id" in result.error.message


def test_a_type_that_cannot_flow_fails_at_registration_naming_step_and_field() -> None:
    registry = support_registry()
    bad = chain(
        "bad",
        "fetch_ticket",
        step("classify", map={"text": "priority"}),
        description="Classify the priority number as text.",
    )
    with pytest.raises(SatchelUsageError) as caught:
        registry.register(bad)
    assert caught.value.details["step"] == "classify"
    assert caught.value.details["field"] == "text"
    assert "integer" in caught.value.message
    assert "string" in caught.value.message
    assert "bad" not in registry


def test_a_missing_field_fails_at_registration() -> None:
    registry = support_registry()
    with pytest.raises(SatchelUsageError) as caught:
        registry.register(
            chain(
                "bad",
                "fetch_ticket",
                step("classify", map={"text": "fetch_ticket.subject"}),
                description="Classify a field that does not exist.",
            )
        )
    assert (caught.value.details["step"], caught.value.details["field"]) == ("classify", "text")
    assert "subject" in caught.value.message


def test_a_step_reading_a_later_step_is_a_cycle() -> None:
    registry = support_registry()
    with pytest.raises(SatchelUsageError, match="cycle") as caught:
        registry.register(
            chain(
                "bad",
                step("classify", map={"text": "escalate.escalated"}),
                "escalate",
                description="Reads the future.",
            )
        )
    assert caught.value.details["step"] == "classify"


def test_steps_waiting_for_each_other_are_a_cycle() -> None:
    registry = support_registry()
    with pytest.raises(SatchelUsageError, match="cycle"):
        registry.register(
            chain(
                "bad",
                step("fetch_ticket", after=["classify"]),
                step("classify", map={"text": "body"}),
                description="Waits on itself.",
            )
        )


def test_a_condition_reading_an_unknown_field_fails_at_registration() -> None:
    registry = support_registry()
    with pytest.raises(SatchelUsageError) as caught:
        registry.register(
            chain(
                "bad",
                "fetch_ticket",
                step("classify", map={"text": "body"}, when="severity == 'high'"),
                description="Reads a field nobody gives.",
            )
        )
    assert (caught.value.details["step"], caught.value.details["field"]) == (
        "classify",
        "severity",
    )


def test_a_mapping_to_a_parameter_the_tool_lacks_fails() -> None:
    registry = support_registry()
    with pytest.raises(SatchelUsageError) as caught:
        registry.register(
            chain("bad", step("classify", map={"body": "text"}), description="Wrong side.")
        )
    assert caught.value.details["field"] == "body"


def test_an_unknown_step_tool_fails_at_registration_with_its_name() -> None:
    with pytest.raises(SatchelUsageError, match="nothing_here"):
        support_registry().register(chain("bad", "nothing_here", description="No such tool."))


def test_a_chain_naming_tools_has_no_spec_until_registered() -> None:
    made = _triage()
    with pytest.raises(SatchelUsageError, match="register it"):
        _ = made.spec


async def test_a_failing_step_stops_the_chain_and_carries_its_error_kind() -> None:
    @tool
    def flaky(label: str) -> str:
        """Fails the way a model should retry."""
        raise ToolRetry(f"try another label than {label}")

    registry = support_registry()
    registry.register(flaky)
    registry.register(
        chain(
            "c",
            "fetch_ticket",
            step("classify", map={"text": "body"}),
            "flaky",
            "escalate",
            description="Stops at flaky.",
        )
    )
    result = await registry.call("c", {"ticket_id": 1})
    assert result.error is not None
    assert result.error.kind == "retry"
    assert result.error.details["step"] == "flaky"
    assert result.error.details["step_number"] == 3
    assert result.error.details["completed"] == ["fetch_ticket", "classify"]
    assert "Step 3" in result.error.message


async def test_on_error_skip_goes_on_and_a_fallback_stands_in() -> None:
    @tool
    def broken(text: str) -> str:
        """Always fails."""
        raise ToolFailed("broken")

    @tool
    def backup(text: str) -> str:
        """Answers instead."""
        return f"backup: {text}"

    registry = support_registry()
    registry.register(broken)
    registry.register(backup)
    registry.register(
        chain(
            "skipping",
            "fetch_ticket",
            step("broken", map={"text": "body"}, on_error="skip"),
            step("classify", map={"text": "body"}),
            description="Skips broken.",
        )
    )
    registry.register(
        chain(
            "falling",
            "fetch_ticket",
            step("broken", map={"text": "body"}, on_error=Fallback("backup")),
            description="Falls back.",
        )
    )
    skipped = await registry.call("skipping", {"ticket_id": 1})
    fell = await registry.call("falling", {"ticket_id": 1})
    assert skipped.output == {"label": "urgent"}
    assert fell.output == {"result": "backup: the server is down"}


async def test_a_python_predicate_is_a_condition_too() -> None:
    registry = support_registry()
    registry.register(
        chain(
            "c",
            "fetch_ticket",
            step("classify", map={"text": "body"}),
            step("escalate", when=lambda data: data["priority"] > 10),
            description="Escalates high numbers.",
        )
    )
    low = await registry.call("c", {"ticket_id": 3})
    high = await registry.call("c", {"ticket_id": 11})
    assert low.output == {"label": "urgent"}
    assert high.output == {"escalated": "ticket 11 (urgent)"}


async def test_a_condition_that_cannot_be_evaluated_is_a_failed_step() -> None:
    registry = support_registry()
    registry.register(
        chain(
            "c",
            "fetch_ticket",
            step("classify", map={"text": "body"}, when="abs(body) > `1`"),
            description="abs() of text.",
        )
    )
    result = await registry.call("c", {"ticket_id": 3})
    assert result.error is not None
    assert result.error.kind == "failed"
    assert result.error.details["step"] == "classify"


async def test_fan_out_runs_each_item_bounded_and_collects_each_field() -> None:
    running = 0
    peak = 0

    @tool
    async def double(n: int) -> int:
        """Double a number."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        running -= 1
        return n * 2

    @tool
    def total(result: list[int]) -> int:
        """Add numbers."""
        return sum(result)

    registry = ToolRegistry([double, total])
    registry.register(
        chain(
            "sum_doubles",
            step("double", over="n", limit=3),
            "total",
            description="Double each number, then add them.",
        )
    )
    spec = registry.get("sum_doubles")
    assert spec is not None
    assert spec.spec.input_schema["properties"]["n"] == {
        "type": "array",
        "items": {"type": "integer"},
        "maxItems": MAX_ITEMS,
    }
    result = await registry.call("sum_doubles", {"n": list(range(10))})
    assert result.output == {"result": 90}
    assert 1 < peak <= 3


async def test_a_fan_out_over_more_items_than_its_bound_runs_nothing() -> None:
    calls = 0

    @tool
    def bump(n: int) -> int:
        """Count a call."""
        nonlocal calls
        calls += 1
        return n

    @tool
    def many(count: int) -> list[int]:
        """A list of ``count`` numbers."""
        return list(range(count))

    registry = ToolRegistry([bump, many])
    registry.register(
        chain("direct", step("bump", over="n", max_items=5), description="Bump each.")
    )
    registry.register(
        chain(
            "fed",
            "many",
            step("bump", over="n", map={"n": "result"}, max_items=5),
            description="Bump many.",
        )
    )

    direct = await registry.call("direct", {"n": list(range(3000))})
    fed = await registry.call("fed", {"count": 3000})
    within = await registry.call("direct", {"n": [1, 2, 3, 4, 5]})

    assert direct.error is not None
    assert direct.error.kind in {"invalid_arguments", "retry"}
    assert fed.error is not None
    assert fed.error.kind == "retry"
    assert "at most 5" in fed.error.message
    assert within.ok
    assert calls == 5  # only the call within the bound ran
    assert registry.get("direct").spec.input_schema["properties"]["n"]["maxItems"] == 5  # type: ignore[union-attr]


def test_a_fan_out_bound_below_one_is_a_usage_error() -> None:
    with pytest.raises(SatchelUsageError, match="max_items"):
        step("bump", over="n", max_items=0)


async def test_independent_steps_of_a_concurrent_chain_run_at_once() -> None:
    left_ready, right_ready = anyio.Event(), anyio.Event()

    class Left(BaseModel):
        left: str

    class Right(BaseModel):
        right: str

    @tool
    async def left(x: str) -> Left:
        """Waits for right."""
        left_ready.set()
        await right_ready.wait()
        return Left(left=x)

    @tool
    async def right(y: str) -> Right:
        """Waits for left."""
        right_ready.set()
        await left_ready.wait()
        return Right(right=y)

    registry = ToolRegistry([left, right])
    registry.register(
        chain(
            "both",
            "left",
            "right",
            description="Both at once.",
            concurrent=True,
            output=["left", "right"],
        )
    )
    with anyio.fail_after(10):  # run one after the other, each would wait forever
        result = await registry.call("both", {"x": "a", "y": "b"})
    assert result.output == {"left": "a", "right": "b"}


async def test_a_destructive_step_makes_the_chain_need_approval_bound_to_its_arguments() -> None:
    deleted: list[int] = []

    @tool(destructive=True)
    def delete_ticket(ticket_id: int) -> str:
        """Delete a ticket."""
        deleted.append(ticket_id)
        return "deleted"

    registry = support_registry()
    registry.register(delete_ticket)
    made = registry.register(
        chain("close", "fetch_ticket", "delete_ticket", description="Fetch then delete.")
    )
    assert made.spec.annotations.destructive is True
    async with PermissionBroker() as broker:
        gated = with_approval(registry, broker)
        first = await gated.call("close", {"ticket_id": 5})
        assert first.error is not None
        assert first.error.kind == "needs_approval"
        assert first.error.details["tool"] == "close"
        assert first.error.details["arguments"] == {"ticket_id": 5}
        approval = str(first.error.details["approval_id"])
        await broker.resolve(approval, Decision.approve_once(), by="ops")
        other = await gated.call("close", {"ticket_id": 6}, ToolContext(approval_id=approval))
        ran = await gated.call("close", {"ticket_id": 5}, ToolContext(approval_id=approval))
    assert other.error is not None
    assert other.error.kind == "denied"
    assert ran.output == {"result": "deleted"}
    assert deleted == [5]


async def test_a_chain_of_tool_objects_is_checked_at_once_and_needs_no_registry() -> None:
    made = chain("one", escalate, description="Escalate.")
    result = await made.call({"label": "x", "ticket_id": 1}, ToolContext())
    assert result.output == {"escalated": "ticket 1 (x)"}


async def test_a_chain_can_choose_its_output_fields() -> None:
    registry = support_registry()
    registry.register(
        chain(
            "c",
            "fetch_ticket",
            step("classify", map={"text": "body"}),
            output=["body", "label"],
            description="Body and label.",
        )
    )
    result = await registry.call("c", {"ticket_id": 2})
    assert result.output == {"body": "please change my email", "label": "normal"}
    spec = registry.get("c")
    assert spec is not None
    assert spec.spec.output_schema is not None
    assert spec.spec.output_schema["required"] == ["body", "label"]


def test_requires_names_are_checked_when_registered() -> None:
    @tool(requires=["login"])
    def fetch_private() -> str:
        """Needs a login first."""
        return "secret"

    registry = ToolRegistry()
    with pytest.raises(SatchelUsageError, match="login"):
        registry.register(fetch_private)

    @tool
    def login() -> str:
        """Log in."""
        return "ok"

    registry.register(login)
    assert registry.register(fetch_private).spec.requires == ("login",)
    assert "call only after login" in registry.usage_rules()


FIELDS = st.sampled_from(
    [
        "text",
        "body",
        "priority",
        "label",
        "ticket_id",
        "fetch_ticket.body",
        "input.text",
        "classify.label",
        "nope",
        "escalate.escalated",
        "",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["text", "label", "ticket_id", "other"]), FIELDS, max_size=3),
    st.one_of(st.none(), st.text(max_size=20), st.sampled_from(["label == 'x'", "priority"])),
)
def test_any_chain_definition_registers_or_names_what_is_wrong(
    mapping: dict[str, str], when: str | None
) -> None:
    registry = support_registry()
    problem: SatchelUsageError | None = None
    try:
        registry.register(
            chain(
                "fuzzed",
                "fetch_ticket",
                step("classify", map={k: v for k, v in mapping.items() if k == "text"}),
                step("escalate", map={k: v for k, v in mapping.items() if k != "text"}, when=when),
                description="Fuzzed.",
            )
        )
    except SatchelUsageError as exc:
        problem = exc
    if problem is None:
        assert "fuzzed" in registry
    else:
        assert "fuzzed" not in registry
        assert problem.message
