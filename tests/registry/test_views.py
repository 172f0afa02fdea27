"""Registry wrappers are views: they follow their source's later changes and tell
their own listeners, under the names they show."""

from __future__ import annotations

import anyio
import pytest

from satchel import (
    RegistryEvent,
    SatchelUsageError,
    ToolRegistry,
    filtered,
    prefixed,
    tool,
    with_rate_limit,
    with_timeout,
)
from satchel.consent import InMemoryApprovalStore, PermissionBroker, with_approval
from satchel.registry import BaseRegistry, RegistryView, merged

pytestmark = pytest.mark.anyio


@tool(category="math")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool(category="math")
def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@tool(category="text")
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@tool(destructive=True)
def wipe(path: str) -> str:
    """Delete a file."""
    return f"wiped {path}"


def heard(registry: ToolRegistry) -> list[RegistryEvent]:
    events: list[RegistryEvent] = []
    registry.subscribe(events.append)
    return events


async def test_a_prefixed_view_shows_tools_registered_after_it_was_made() -> None:
    source = ToolRegistry([add])
    view = prefixed(source, "calc")
    events = heard(view)
    source.register(mul)
    assert view.names() == ["calc_add", "calc_mul"]
    assert (await view.call("calc_mul", {"a": 3, "b": 4})).output == 12
    assert events == [RegistryEvent("added", "calc_mul")]


async def test_removing_from_the_source_removes_from_every_layer_of_views() -> None:
    source = ToolRegistry([add, mul])
    outer = prefixed(with_timeout(source, 5.0), "calc")
    events = heard(outer)
    source.unregister("add")
    assert outer.names() == ["calc_mul"]
    result = await outer.call("calc_add", {"a": 1, "b": 2})
    assert result.error is not None
    assert result.error.kind == "unknown_tool"
    assert events == [RegistryEvent("removed", "calc_add")]


async def test_a_filter_is_asked_again_when_a_tool_is_replaced() -> None:
    source = ToolRegistry([add, shout])
    maths = filtered(source, lambda spec: spec.category == "math")
    events = heard(maths)
    assert maths.names() == ["add"]

    @tool(name="shout", category="math")
    def shout_sum(text: str) -> str:
        """Now it counts."""
        return str(len(text))

    source.register(shout_sum, replace=True)
    assert maths.names() == ["add", "shout"]
    source.register(shout, replace=True)
    assert maths.names() == ["add"]
    assert events == [RegistryEvent("added", "shout"), RegistryEvent("removed", "shout")]


async def test_a_timeout_view_stops_a_slow_tool_registered_later() -> None:
    source = ToolRegistry()
    view = with_timeout(source, 0.05)

    @tool
    async def slow() -> str:
        """Never finishes in time."""
        await anyio.sleep(10)
        return "late"

    source.register(slow)
    with anyio.fail_after(5):
        result = await view.call("slow", {})
    assert result.error is not None
    assert result.error.kind == "timeout"


async def test_an_approval_view_gates_a_destructive_tool_registered_later() -> None:
    source = ToolRegistry([add])
    async with PermissionBroker(InMemoryApprovalStore()) as broker:
        gated = with_approval(source, broker)
        source.register(wipe)
        result = await gated.call("wipe", {"path": "a.txt"})
    assert result.error is not None
    assert result.error.kind == "needs_approval"
    assert result.error.details["status"] == "pending_confirmation"


async def test_an_unchanged_tool_keeps_its_rate_limit_when_another_tool_arrives() -> None:
    source = ToolRegistry([add])
    limited = with_rate_limit(source, calls=1, per_seconds=3600)
    assert (await limited.call("add", {"a": 1, "b": 1})).ok
    source.register(mul)
    again = await limited.call("add", {"a": 1, "b": 1})
    assert again.error is not None
    assert again.error.kind == "retry"
    assert (await limited.call("mul", {"a": 2, "b": 2})).output == 4


def test_a_view_refuses_registration_and_says_where_to_register() -> None:
    view = prefixed(ToolRegistry([add]), "calc")
    with pytest.raises(SatchelUsageError, match="source registry"):
        view.register(mul)
    with pytest.raises(SatchelUsageError, match="source registry"):
        view.unregister("calc_add")
    assert view.names() == ["calc_add"]


async def test_merged_follows_every_source_and_refuses_a_name_defined_twice() -> None:
    first, second = ToolRegistry([add]), ToolRegistry([shout])
    catalog = merged(first, second)
    events = heard(catalog)
    second.register(mul)
    first.unregister("add")
    assert catalog.names() == ["shout", "mul"]
    assert events == [RegistryEvent("added", "mul"), RegistryEvent("removed", "add")]
    with pytest.raises(SatchelUsageError, match="'mul' is defined by two registries"):
        merged(second, ToolRegistry([mul]))


def test_a_name_that_later_appears_twice_is_shown_from_the_first_source() -> None:
    first, second = ToolRegistry([add]), ToolRegistry()
    catalog = merged(first, second)
    events = heard(catalog)
    second.register(add)
    assert catalog.get("add") is first.get("add")
    first.unregister("add")
    assert catalog.get("add") is second.get("add")
    second.unregister("add")
    assert catalog.names() == []
    assert events == [RegistryEvent("replaced", "add"), RegistryEvent("removed", "add")]


def test_a_view_needs_a_source() -> None:
    with pytest.raises(SatchelUsageError, match="at least one source"):
        RegistryView([], lambda t: t)


async def test_a_merged_registry_takes_new_tools_but_not_a_name_it_serves() -> None:
    catalog = merged(ToolRegistry([add]))
    catalog.register(mul)
    catalog.register_raw(
        name="echo",
        description="Echo text back.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        run=lambda args: args["text"],
    )
    assert catalog.names() == ["add", "mul", "echo"]
    assert (await catalog.call("echo", {"text": "hi"})).output == "hi"
    with pytest.raises(SatchelUsageError, match="already served"):
        catalog.register(add)
    catalog.unregister("mul")
    with pytest.raises(SatchelUsageError, match="source registry"):
        catalog.unregister("add")
    assert catalog.names() == ["add", "echo"]


async def test_a_view_is_a_read_only_registry_and_wraps_like_any_other() -> None:
    source = ToolRegistry([add])
    view = filtered(source, lambda spec: True)
    assert isinstance(view, BaseRegistry)
    assert not isinstance(view, ToolRegistry)  # nothing to pin, replace or mount on it
    assert not hasattr(view, "pin_version")
    assert not hasattr(view, "register_raw")
    gated = with_approval(view, PermissionBroker(InMemoryApprovalStore()))
    shown = prefixed(gated, "calc")  # a view of a view of a view, still a registry
    source.register(mul)
    assert shown.names() == ["calc_add", "calc_mul"]
    assert (await shown.call("calc_mul", {"a": 6, "b": 7})).output == 42
