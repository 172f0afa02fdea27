from __future__ import annotations

import pytest

import satchel.examples
from satchel.examples import build_registry
from satchel.schema import DIALECTS, Dialect, check_definition


def test_the_demo_registry_has_one_tool_of_each_kind() -> None:
    registry = build_registry()

    assert registry.names() == ["word_count", "add", "notes", "echo"]
    notes = registry.get("notes")
    assert notes is not None
    assert notes.spec.is_destructive({"operation": "delete", "title": "x"})
    assert not notes.spec.is_destructive({"operation": "write", "title": "x", "content": ""})


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_demo_tool_obeys_every_dialect(dialect: Dialect) -> None:
    for definition in build_registry().schemas(dialect):
        assert check_definition(definition, dialect) == []


def test_notes_write_then_read_then_delete() -> None:
    registry = build_registry()

    written = registry.call_sync("notes", {"operation": "write", "title": "t", "content": "c"})
    read = registry.call_sync("notes", {"operation": "read", "title": "t"})
    deleted = registry.call_sync("notes", {"operation": "delete", "title": "t"})
    missing = registry.call_sync("notes", {"operation": "read", "title": "t"})

    assert [written.ok, read.ok, deleted.ok] == [True, True, True]
    assert read.structured() == {"title": "t", "content": "c", "status": "read"}
    assert missing.error is not None
    assert missing.error.kind == "retry"


def test_examples_all_is_sorted() -> None:
    assert satchel.examples.__all__ == sorted(satchel.examples.__all__)
