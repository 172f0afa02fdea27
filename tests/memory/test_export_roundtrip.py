"""Property: every Unicode scalar value survives export → import, on both backends.

Blocks (core and archival: value, description, label, tags, metadata), messages
(content, conversation, tags, metadata) are written through the store's own API, exported
to the JSON-lines file format (``satchel memory export``), read back the way ``satchel
memory import`` reads it, and imported into a second store; both stores must then
export the same records and the same bytes (issue 11, item 6: U+2028, U+2029 and U+0085
once broke a line in two)."""

from __future__ import annotations

import io
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from satchel.cli._export import export_lines, read_export
from satchel.memory import BlockKind, MemoryStore
from satchel.memory._models import validate_label

from .conftest import StoreFactory

pytestmark = pytest.mark.anyio

# Every Unicode scalar value: every code point but the surrogates, which are not text.
scalars = st.characters(codec="utf-8")
BREAKERS = "\u2028\u2029\u0085\r\n\x0b\x0c\x1c\x1d\x1e\x00"
texts = st.text(st.one_of(scalars, st.sampled_from(BREAKERS)), max_size=60)
tags = st.lists(texts.filter(bool), max_size=4, unique=True)


def _is_label(text: str) -> bool:
    try:
        validate_label(text)
    except ValueError:
        return False
    return True


labels = st.text(scalars, min_size=1, max_size=20).filter(_is_label)
json_values: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
metadata = st.dictionaries(texts, json_values, max_size=4)

_agents = itertools.count()


@pytest.fixture
async def stores(make_store: StoreFactory) -> tuple[MemoryStore, MemoryStore]:
    return await make_store(), await make_store()


async def _file(store: MemoryStore, agent: str) -> bytes:
    return b"".join([(line + "\n").encode() async for line in export_lines(store, agent)])


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    label=labels,
    value=texts,
    description=texts,
    archival=texts,
    content=texts,
    conversation=texts.filter(bool),
    block_tags=tags,
    message_tags=tags,
    block_metadata=metadata,
    message_metadata=metadata,
)
@example(
    label="p",
    value="a\u2028b\u2029c\u0085d\r\ne",
    description="\u2028",
    archival="\u0085",
    content="line\u2029para",
    conversation="c\u2028",
    block_tags=["\u2028"],
    message_tags=["\u0085"],
    block_metadata={"\u2029": "\u2028"},
    message_metadata={"k": ["\u0085", {"\u2028": None}]},
)
async def test_every_unicode_scalar_value_survives_export_and_import(
    stores: tuple[MemoryStore, MemoryStore],
    label: str,
    value: str,
    description: str,
    archival: str,
    content: str,
    conversation: str,
    block_tags: list[str],
    message_tags: list[str],
    block_metadata: dict[str, Any],
    message_metadata: dict[str, Any],
) -> None:
    source, target = stores
    agent = f"agent-{next(_agents)}"
    await source.create_block(
        agent, label, value, description=description, tags=block_tags, metadata=block_metadata
    )
    await source.create_block(agent, "entry", archival, kind=BlockKind.ARCHIVAL)
    await source.add_message(
        agent,
        "user",
        content,
        conversation_id=conversation,
        tags=message_tags,
        metadata=message_metadata,
    )
    exported = await _file(source, agent)
    for breaker in "\u2028\u2029\u0085":
        assert breaker.encode() not in exported

    await target.import_records(read_export(io.BytesIO(exported), agent=agent))

    assert [r async for r in target.export_records(agent)] == [
        r async for r in source.export_records(agent)
    ]
    assert await _file(target, agent) == exported
