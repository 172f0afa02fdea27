"""``render_context``: the system context a model reads."""

from __future__ import annotations

import pytest

from satchel.builtin import render_context
from satchel.memory import BlockKind, Permission
from satchel.registry import ToolRegistry

from .conftest import Kit

pytestmark = pytest.mark.anyio


async def test_the_context_shows_core_then_working_blocks_with_their_facts(kit: Kit) -> None:
    store = kit.store
    await store.create_block(
        "ada", "persona", "I am Ada.", description="Who I am", char_limit=2000, pinned=True
    )
    await store.create_block("ada", "task", "Fix the roof.", kind=BlockKind.WORKING)
    await store.create_block("ada", "diary", "private archival text", kind=BlockKind.ARCHIVAL)
    await store.create_block("bob", "team", "Ship Fridays.", permission=Permission.ADMIN)
    await store.share_block("bob", "team", "ada", Permission.APPEND)

    text = await render_context(store, "ada", kit.tools)

    core = text[text.index("<core_memory>") : text.index("</core_memory>")]
    working = text[text.index("<working_memory>") : text.index("</working_memory>")]
    assert '<block label="persona" chars="9/2000" permission="read_write" pinned="true">' in core
    assert "<description>Who I am</description>" in core
    assert "<value>\nI am Ada.\n</value>" in core
    assert 'label="bob/team" chars="13" permission="append" shared_from="bob"' in core
    assert 'label="task"' in working
    assert "Fix the roof." in working
    assert "private archival text" not in text
    assert text.index("<core_memory>") < text.index("<working_memory>") < text.index("<tool_rules>")
    assert "- send_message: When send_message is called, the turn ends." in text


async def test_an_empty_memory_says_so_and_a_registry_without_rules_adds_nothing(
    kit: Kit,
) -> None:
    text = await render_context(kit.store, "nobody", ToolRegistry())

    assert "No core blocks." in text
    assert "No working blocks are loaded." in text
    assert "<tool_rules>" not in text
    assert text.startswith('<memory agent="nobody">')


async def test_values_are_rendered_verbatim_so_a_model_can_quote_them(kit: Kit) -> None:
    value = 'Uses <tags> & "quotes"'
    await kit.store.create_block("ada", "notes", value)

    text = await render_context(kit.store, "ada")

    assert f"\n{value}\n" in text
