"""Hypothesis: whatever a model sends to the meta-tools (random or hostile queries,
filters, limits, tool names, parameters, approval ids), the answer is a structured
result and nothing raises."""

from __future__ import annotations

import functools
import json
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meta.conftest import Log, make_catalog
from satchel import ToolResult
from satchel.embed import default_embedder
from satchel.meta import MetaTools

TOOL_NAMES = make_catalog(Log()).names()


@functools.cache
def bm25_meta() -> MetaTools:
    """Built on first use, not at import (collection stays fast)."""
    return MetaTools(make_catalog(Log()), embedder=None)


@functools.cache
def hybrid_meta() -> MetaTools:
    return MetaTools(make_catalog(Log()), embedder=default_embedder())


KNOWN = ["files", "FILES", "weather", "uncategorized", "read", "delete", "create"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=10,
)
queries = st.one_of(
    st.text(max_size=300),
    st.sampled_from(
        ["", " ", "*", "\x00", 'NEAR("a" "b")', "a OR b AND NOT c", "天气 forecast", "🙂" * 50]
    ),
    st.just("delete " * 5000),
    json_values,
)
filters = st.one_of(
    st.lists(st.one_of(st.sampled_from(KNOWN), st.text(max_size=12)), max_size=4),
    json_values,
)
limits = st.one_of(st.integers(min_value=-5, max_value=200), json_values)
discover_args = st.fixed_dictionaries(
    {},
    optional={"query": queries, "categories": filters, "actions": filters, "limit": limits},
).flatmap(
    lambda base: st.one_of(
        st.just(base),
        st.builds(
            lambda extra: {**base, **extra},
            st.dictionaries(st.text(max_size=6), scalars, max_size=2),
        ),
    )
)
names = st.one_of(st.sampled_from(TOOL_NAMES), st.text(max_size=70), json_values)
parameters = st.one_of(
    st.dictionaries(
        st.sampled_from(["path", "city", "days", "operation", "id", "repo", "amount", "x"]),
        json_values,
        max_size=4,
    ),
    json_values,
    st.builds(json.dumps, st.dictionaries(st.text(max_size=6), scalars, max_size=3)),
)


def check(result: ToolResult) -> None:
    data = json.loads(result.to_json())
    assert data["ok"] is (result.error is None)
    if result.error is not None:
        assert result.error.kind in {
            "unknown_tool",
            "invalid_arguments",
            "needs_approval",
            "denied",
            "failed",
        }
        assert result.error.message
    assert len(result.to_text()) < 50_000


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(args=discover_args)
def test_discover_never_raises(args: dict[str, Any]) -> None:
    check(anyio.run(bm25_meta().registry.call, "discover_tools", args))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=queries, categories=filters)
def test_hybrid_discover_never_raises(query: Any, categories: Any) -> None:
    check(
        anyio.run(
            hybrid_meta().registry.call,
            "discover_tools",
            {"query": query, "categories": categories},
        )
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=names)
def test_get_tool_schema_never_raises(name: Any) -> None:
    check(anyio.run(bm25_meta().registry.call, "get_tool_schema", {"tool_name": name}))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=names, params=parameters, approval=st.one_of(st.none(), st.text(max_size=30), json_values)
)
def test_invoke_never_raises_and_never_runs_a_destructive_call_unapproved(
    name: Any, params: Any, approval: Any
) -> None:
    args: dict[str, Any] = {"tool_name": name, "parameters": params}
    if approval is not None:
        args["approval_id"] = approval
    result = anyio.run(bm25_meta().registry.call, "invoke_tool", args)
    check(result)
    if name in ("delete_file", "delete_branch"):
        assert not result.ok
