"""A tool declared the AgenticPal way with only reading actions is read-only by default."""

from __future__ import annotations

import pytest

from satchel import tool
from satchel.tools import READ_ACTIONS


def _find(city: str) -> str:
    """Look up the weather."""
    return city


@pytest.mark.parametrize("actions", [["read"], ["list", "search"], ["GET"], ["view", "count"]])
def test_only_reading_actions_make_a_tool_read_only(actions: list[str]) -> None:
    spec = tool(actions=actions)(_find).spec

    assert spec.annotations.read_only is True
    assert spec.is_write is False


@pytest.mark.parametrize("actions", [[], ["read", "update"], ["create"], ["delete", "read"]])
def test_a_writing_action_or_none_leaves_the_tool_a_writer(actions: list[str]) -> None:
    spec = tool(actions=actions)(_find).spec

    assert spec.annotations.read_only is None
    assert spec.is_write is True


def test_an_explicit_read_only_false_wins_over_the_actions() -> None:
    spec = tool(actions=["read"], read_only=False)(_find).spec

    assert spec.annotations.read_only is False
    assert spec.is_write is True


def test_the_read_actions_are_lower_case_words() -> None:
    assert all(a == a.lower() and a.isalpha() for a in READ_ACTIONS)
