"""Scopes, decisions and the argument digest an approval binds to."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from satchel import SatchelUsageError
from satchel.consent import ConsentScope, Decision, args_digest, canonical_json
from satchel.memory._permissions import content_digest


def test_the_digest_ignores_key_order_but_not_values() -> None:
    assert args_digest("rm", {"a": 1, "b": [1, 2]}) == args_digest("rm", {"b": [1, 2], "a": 1})
    assert args_digest("rm", {"a": 1}) != args_digest("rm", {"a": 2})
    assert args_digest("rm", {"a": 1}) != args_digest("rmdir", {"a": 1})


def test_the_digest_keeps_numbers_exact() -> None:
    assert args_digest("t", {"n": 1}) != args_digest("t", {"n": 1.0})
    assert args_digest("t", {"n": 10**30}) != args_digest("t", {"n": 10**30 + 1})


def test_canonical_json_has_no_whitespace_and_sorted_keys() -> None:
    assert canonical_json({"é": [1, {"z": None, "a": True}]}) == '{"é":[1,{"a":true,"z":null}]}'


@pytest.mark.parametrize("bad", [{"x": float("nan")}, {"x": object()}, {"x": {1, 2}}])
def test_arguments_that_are_not_plain_json_are_refused(bad: object) -> None:
    with pytest.raises(SatchelUsageError):
        args_digest("t", bad)


def test_a_tool_scope_binds_the_tool_and_the_arguments() -> None:
    scope = ConsentScope.tool_execution("rm", {"path": "a"}, agent="ada")
    assert scope.kind == "tool_execution"
    assert scope.args_digest == args_digest("rm", {"path": "a"})
    assert scope.key == ConsentScope.tool_execution("rm", {"path": "a"}, agent="ada").key
    assert scope.key != ConsentScope.tool_execution("rm", {"path": "b"}, agent="ada").key


def test_a_scope_rejects_fields_of_the_other_kind() -> None:
    with pytest.raises(ValidationError):
        ConsentScope(kind="memory_edit", label="x", tool="rm")
    with pytest.raises(ValidationError):
        ConsentScope(kind="tool_execution", tool="rm", args_digest="not-hex")
    with pytest.raises(ValidationError):
        ConsentScope(kind="memory_edit")


def test_a_memory_scope_describes_itself_for_a_human() -> None:
    scope = ConsentScope.memory_edit("persona", owner="ada", agent="bob", operation="append")
    assert scope.describe() == "append to memory block 'persona' of ada (by bob)"


def test_a_tool_scope_binds_the_agent() -> None:
    bob = ConsentScope.tool_execution("rm", {"path": "a"}, agent="bob")
    default = ConsentScope.tool_execution("rm", {"path": "a"}, agent="default")
    assert bob.key != default.key
    assert not bob.covers(default)
    assert bob.mismatch(default) == "it was given to another agent"


def test_a_memory_scope_binds_operation_for_grants_and_content_for_one_time_use() -> None:
    def scope(operation: str, content: str | None) -> ConsentScope:
        digest = None if content is None else content_digest(content)
        return ConsentScope.memory_edit(
            "pb", owner="bob", agent="bob", operation=operation, content_digest=digest
        )

    append_x, append_y = scope("append", "x"), scope("append", "y")
    assert append_x.key == append_y.key  # a grant covers the operation, any content
    assert not append_x.covers(append_y)  # a one-time approval covers this content only
    assert append_x.covers(scope("append", "x"))
    archive = scope("kind_change", None)
    assert archive.key != append_x.key
    assert append_x.mismatch(archive) == "it was given to append, not to kind_change"


def test_a_record_stored_before_binding_covers_nothing() -> None:
    legacy = ConsentScope(kind="tool_execution", tool="rm", args_digest=args_digest("rm", {}))
    bound = ConsentScope.tool_execution("rm", {}, agent="default")
    assert not legacy.bound
    assert legacy.key != bound.key
    assert not legacy.covers(legacy)


def test_decisions_carry_a_duration_only_when_approving_for_a_while() -> None:
    assert Decision.approve_for(timedelta(minutes=2)).duration_seconds == 120
    assert not Decision.deny().approved
    assert Decision.approve_scope().approved
    with pytest.raises(ValidationError):
        Decision(kind="approve_for")
    with pytest.raises(ValidationError):
        Decision(kind="approve_once", duration_seconds=5)
