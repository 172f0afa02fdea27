"""``counted``: a count and its noun, singular for one."""

from __future__ import annotations

from satchel._counts import counted


def test_counted_says_one_thing_and_many_things() -> None:
    assert [counted(n, "result") for n in (0, 1, 2)] == ["0 results", "1 result", "2 results"]
    assert counted(1, "entry", "entries") == "1 entry"
    assert counted(3, "entry", "entries") == "3 entries"
