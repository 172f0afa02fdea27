"""The field names a model is likely to guess work on the first call, while the
published schemas keep one name per field."""

from __future__ import annotations

import json

import pytest

from satchel.schema import DIALECTS, Dialect, check_definition

from .conftest import Kit

pytestmark = pytest.mark.anyio


async def test_create_and_set_accept_content_as_well_as_value(kit: Kit) -> None:
    await kit.ok("context", {"operation": "create", "label": "human", "content": "Name: Sam"})
    await kit.ok("context", {"operation": "set", "label": "persona", "content": "Helpful."})

    assert (await kit.store.get_block("ada", "human")).value == "Name: Sam"
    assert (await kit.store.get_block("ada", "persona")).value == "Helpful."


async def test_append_accepts_value_as_well_as_content(kit: Kit) -> None:
    await kit.store.create_block("ada", "human", "Name: Sam")

    await kit.ok("context", {"operation": "append", "label": "human", "value": "Likes tea."})

    assert (await kit.store.get_block("ada", "human")).value == "Name: Sam\nLikes tea."


async def test_replace_accepts_letta_s_old_content_and_new_content(kit: Kit) -> None:
    await kit.store.create_block("ada", "human", "Likes tea.")

    await kit.ok(
        "context",
        {"operation": "replace", "label": "human", "old_content": "tea", "new_content": "coffee"},
    )
    await kit.ok(
        "context",
        {"operation": "replace", "label": "human", "old_str": "Likes", "new_str": "Loves"},
    )

    assert (await kit.store.get_block("ada", "human")).value == "Loves coffee."


async def test_sending_both_names_for_one_field_is_an_error_naming_the_extra_one(
    kit: Kit,
) -> None:
    error = await kit.error(
        "context", {"operation": "create", "label": "human", "value": "a", "content": "b"}
    )

    assert error.kind == "invalid_arguments"
    assert error.details["errors"] == [
        {"field": "content", "problem": "is not a known field; remove it", "operation": "create"}
    ]


async def test_a_missing_text_field_names_the_published_field(kit: Kit) -> None:
    error = await kit.error("context", {"operation": "set", "label": "human"})

    assert [e["field"] for e in error.details["errors"]] == ["value"]


async def test_search_without_a_domain_looks_everywhere(kit: Kit) -> None:
    await kit.ok("recall", {"operation": "insert", "content": "Ada keeps bees."})

    out = await kit.ok("search", {"query": "bees"})

    assert [r["text"] for r in out["results"]] == ["Ada keeps bees."]
    search = kit.tools.get("search")
    assert search is not None
    assert "domain" not in search.spec.input_schema.get("required", [])


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_the_published_schemas_name_each_field_once_and_stay_valid(
    kit: Kit, dialect: Dialect
) -> None:
    for definition in kit.tools.schemas(dialect):
        assert check_definition(definition, dialect) == []
        text = json.dumps(definition)
        for guess in ("old_content", "new_content", "old_str", "new_str", "AliasChoices"):
            assert guess not in text
