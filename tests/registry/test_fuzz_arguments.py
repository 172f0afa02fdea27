"""Hypothesis: whatever a model sends, ``call()`` returns a structured result and never
raises."""

from __future__ import annotations

import json
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel import ToolRegistry
from tool_fixtures import all_test_tools

REGISTRY = ToolRegistry(all_test_tools())  # type: ignore[arg-type]
NAMES = REGISTRY.names()

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=50),
    st.sampled_from(
        ["read", "write", "delete", "retry", "ok", "crash", "fail", "[1,2]", '{"a":1}']
    ),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
field_names = st.sampled_from(
    ["text", "a", "b", "operation", "path", "content", "tags", "names", "mode", "seconds", "x"]
)
payloads = st.one_of(
    st.dictionaries(field_names, json_values, max_size=5),
    st.dictionaries(st.text(max_size=10), json_values, max_size=5),
    json_values,
    st.text(max_size=200),
    st.binary(max_size=50),
    st.builds(lambda d: json.dumps(d), st.dictionaries(field_names, json_values, max_size=4)),
    st.just({"text": "x" * 1_000_000}),
    st.just("{" * 5000),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from([*NAMES, "nope", ""]), args=payloads)
def test_call_never_raises_and_errors_are_structured(name: str, args: Any) -> None:
    if name in ("slow", "slow_sync") and isinstance(args, dict):
        args = {k: v for k, v in args.items() if k != "seconds"}  # keep the run fast
    result = anyio.run(REGISTRY.call, name, args)
    if result.ok:
        assert result.error is None
        json.loads(result.to_json())
    else:
        assert result.error is not None
        assert result.error.kind in {
            "unknown_tool",
            "invalid_arguments",
            "failed",
            "retry",
            "internal",
        }
        assert result.error.message
        data = json.loads(result.to_json())
        assert data["ok"] is False
        assert data["error"]["kind"] == result.error.kind
        assert len(result.to_text()) < 20_000
