"""Wrappers around a tool or a registry: prefix, filter, timeout, rate limit, logging."""

from __future__ import annotations

import logging

import pytest

from satchel import (
    SatchelUsageError,
    ToolRegistry,
    filtered,
    prefixed,
    with_logging,
    with_rate_limit,
    with_timeout,
)
from tool_fixtures import WordCount, add, slow, slow_sync

pytestmark = pytest.mark.anyio


async def test_prefixed_registry_renames_every_tool_and_results() -> None:
    registry = prefixed(ToolRegistry([WordCount(), add]), "gh")
    assert registry.names() == ["gh_word_count", "gh_add"]
    result = await registry.call("gh_add", {"a": 1, "b": 2})
    assert (result.tool, result.output) == ("gh_add", 3)


def test_prefix_that_breaks_the_name_budget_is_refused() -> None:
    with pytest.raises(SatchelUsageError, match="64"):
        prefixed(add, "p" * 62)


def test_filtered_keeps_only_matching_tools() -> None:
    registry = ToolRegistry([WordCount(), add])
    only_math = filtered(registry, lambda spec: spec.category == "math")
    assert only_math.names() == ["add"]
    assert registry.names() == ["word_count", "add"]


async def test_timeout_cancels_a_slow_async_tool() -> None:
    registry = ToolRegistry([with_timeout(slow, 0.05)])
    result = await registry.call("slow", {"seconds": 5})
    assert result.error is not None
    assert result.error.kind == "timeout"
    assert result.error.details["timeout_seconds"] == 0.05


async def test_timeout_is_honoured_for_a_sync_tool() -> None:
    registry = ToolRegistry([with_timeout(slow_sync, 0.05)])
    result = await registry.call("slow_sync", {"seconds": 1})
    assert result.error is not None
    assert result.error.kind == "timeout"


async def test_timeout_lets_a_fast_call_through() -> None:
    registry = ToolRegistry([with_timeout(add, 5)])
    assert (await registry.call("add", {"a": 1, "b": 1})).output == 2


async def test_rate_limit_answers_retry_once_the_budget_is_spent() -> None:
    registry = ToolRegistry([with_rate_limit(add, calls=2, per_seconds=60)])
    first = await registry.call("add", {"a": 1, "b": 1})
    second = await registry.call("add", {"a": 1, "b": 1})
    third = await registry.call("add", {"a": 1, "b": 1})
    assert first.ok
    assert second.ok
    assert third.error is not None
    assert third.error.kind == "retry"
    assert third.error.details["retry_after_seconds"] > 0


async def test_logging_wrapper_logs_outcome_but_not_arguments(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = ToolRegistry([with_logging(WordCount())])
    with caplog.at_level(logging.INFO, logger="satchel.calls"):
        await registry.call("word_count", {"text": "secret words"})
        await registry.call("word_count", {})
    assert "tool word_count ok" in caplog.text
    assert "tool word_count invalid_arguments" in caplog.text
    assert "secret" not in caplog.text


async def test_replacing_a_tool_with_a_wrapped_version_is_ordinary_registration() -> None:
    registry = ToolRegistry([add, WordCount()])
    registry.register(with_timeout(registry.get("add"), 1), replace=True)  # type: ignore[arg-type]
    assert registry.names() == ["add", "word_count"]
    assert (await registry.call("add", {"a": 2, "b": 2})).output == 4


def test_wrappers_compose() -> None:
    wrapped = prefixed(with_logging(with_timeout(add, 1)), "x")
    assert wrapped.spec.name == "x_add"
    assert wrapped.spec.input_schema == add.spec.input_schema
