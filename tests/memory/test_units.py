"""Units behind the store: FTS5 query rendering, the public API (query terms, fusion
and the vector index are tested in ``tests/retrieval``)."""

from __future__ import annotations

import importlib
import inspect

from satchel.memory.sqlite._search_sql import fts5_match


def test_fts5_match_quotes_every_term() -> None:
    assert fts5_match(["near", "and"]) == '"near" OR "and"'
    assert fts5_match([]) is None


def test_memory_all_is_sorted_complete_and_documented() -> None:
    module = importlib.import_module("satchel.memory")
    exported = list(module.__all__)
    # ruff's order (RUF022): constants, then classes, then functions, each alphabetical
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert public <= set(exported), public - set(exported)
    for name in exported:
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), name
