"""The condition language: JMESPath over JSON values. It never crashes: a bad
expression is a structured usage error, a bad evaluation a structured input error."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from satchel import InvalidInputError, SatchelUsageError
from satchel.compose import Expr, truthy

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
NAMES = st.sampled_from(["label", "count", "items", "input", "a", "b"])
LITERALS = st.sampled_from(["`1`", "`0`", "'urgent'", "`null`", "`[]`", "`true`", "`2.5`"])
OPS = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])


@st.composite
def expressions(draw: st.DrawFn) -> str:
    left = draw(NAMES)
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return f"{left} {draw(OPS)} {draw(LITERALS)}"
    if kind == 1:
        return f"length({left}) > `0`"
    if kind == 2:
        return f"{left}.{draw(NAMES)} && !{draw(NAMES)}"
    if kind == 3:
        return f"contains({left}, {draw(LITERALS)}) || {draw(NAMES)}[0]"
    return f"abs({left}) >= `1`"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_either_parses_or_is_a_structured_usage_error(text: str) -> None:
    problem: SatchelUsageError | None = None
    try:
        Expr(text)
    except SatchelUsageError as exc:
        problem = exc
    if problem is not None:
        assert problem.details["problem"]
        assert "expression" in problem.details


@settings(max_examples=300, deadline=None)
@given(expressions(), st.dictionaries(NAMES, JSON, max_size=6))
def test_evaluation_gives_a_bool_or_a_structured_input_error(
    text: str, data: dict[str, Any]
) -> None:
    expr = Expr(text)
    outcome: bool | InvalidInputError
    try:
        outcome = expr.evaluate(data)
    except InvalidInputError as exc:
        outcome = exc
    if isinstance(outcome, InvalidInputError):
        assert outcome.details["expression"] == text
    else:
        assert isinstance(outcome, bool)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_truth_follows_jmespath(value: Any) -> None:
    assert truthy(value) == (
        value not in (None, False, "", [], {}) or (value == 0 and value is not False)
    )


@pytest.mark.parametrize(
    ("text", "data", "expected"),
    [
        ("label == 'urgent'", {"label": "urgent"}, True),
        ("count > `3`", {"count": 2}, False),
        ("count", {"count": 0}, True),
        ("items", {"items": []}, False),
        ("length(items) > `1` && !draft", {"items": [1, 2], "draft": False}, True),
        ("classify.label == 'x'", {"classify": {"label": "x"}}, True),
    ],
)
def test_conditions_read_json_values(text: str, data: dict[str, Any], expected: bool) -> None:
    assert Expr(text).evaluate(data) is expected


def test_a_bad_expression_names_where_it_broke() -> None:
    with pytest.raises(SatchelUsageError) as caught:
        Expr("label == ")
    assert caught.value.details["expression"] == "label == "
    assert isinstance(caught.value.details.get("position"), int)


def test_roots_are_the_top_level_names_read() -> None:
    assert Expr("a.b == `1` && length(c) > `0`").roots() == {"a", "c"}
    assert Expr("items[?x > `1`].y").roots() == {"items"}
    assert Expr("@").roots() is None
