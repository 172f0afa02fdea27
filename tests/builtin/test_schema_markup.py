"""No built-in tool shows a model Sphinx markup, in any dialect."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import anyio
import pytest

from satchel.builtin import memory_toolset
from satchel.memory import SQLiteStore
from satchel.meta import MetaTools
from satchel.registry import ToolRegistry
from satchel.schema import DIALECTS, Dialect

# ``literal``, :role:`target`, :py:role:`target`, a `\ ` escape, a `.. directive::`
REST_MARKUP = re.compile(r"``|:(?:[a-z]+:)?[a-z]+:`|`\\\\ |\.\. [a-z-]+::")


@pytest.fixture(scope="module")
def builtin_tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToolRegistry]:
    store = SQLiteStore(tmp_path_factory.mktemp("markup") / "m.db", embedder=None)
    memory = memory_toolset(store)
    meta = MetaTools(memory, dialect="mcp")
    yield ToolRegistry([*memory, *meta.registry])
    anyio.run(store.close)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_no_builtin_tool_schema_carries_rest_markup(
    builtin_tools: ToolRegistry, dialect: Dialect
) -> None:
    definitions = builtin_tools.schemas(dialect)
    assert len(definitions) == len(builtin_tools) >= 7
    for definition in definitions:
        text = json.dumps(definition, ensure_ascii=False)
        assert REST_MARKUP.findall(text) == [], json.dumps(definition, indent=1)[:3000]
