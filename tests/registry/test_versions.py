"""Several versions of one tool side by side: the bare name calls the latest (or a
pinned default), ``name@1`` an older one, and a deprecated version says so."""

from __future__ import annotations

import pytest

from satchel import MetaTools, SatchelUsageError, ToolRegistry, chain, prefixed, tool
from satchel.registry import merged
from satchel.schema import check_definition

pytestmark = pytest.mark.anyio


@tool(name="convert", version="1", deprecated="use convert@2, which returns metres")
def convert_v1(feet: float) -> float:
    """Convert feet to inches."""
    return feet * 12


@tool(name="convert", version="2")
def convert_v2(feet: float) -> float:
    """Convert feet to metres."""
    return round(feet * 0.3048, 4)


def _registry() -> ToolRegistry:
    return ToolRegistry([convert_v1, convert_v2])


async def test_the_bare_name_calls_the_latest_and_name_at_1_the_older() -> None:
    registry = _registry()
    latest = await registry.call("convert", {"feet": 10})
    older = await registry.call("convert@1", {"feet": 10})
    assert latest.output == 3.048
    assert latest.notice is None
    assert older.output == 120
    assert older.notice == "convert@1 is deprecated: use convert@2, which returns metres"
    assert "Notice: convert@1 is deprecated" in older.to_text()
    assert older.to_dict()["notice"] == older.notice


async def test_schemas_offer_one_version_per_name_unless_asked() -> None:
    registry = _registry()
    assert [d["function"]["name"] for d in registry.schemas("openai")] == ["convert"]
    every = registry.schemas("openai", versions="all")
    assert [d["function"]["name"] for d in every] == ["convert", "convert_v1"]
    assert "Deprecated" in every[1]["function"]["description"]
    for definition in every:
        assert check_definition(definition, "openai") == []
    mcp = registry.schemas("mcp")[0]
    assert mcp["_meta"] == {"satchel/version": "2", "satchel/versions": ["1", "2"]}
    alias = await registry.call("convert_v1", {"feet": 1})
    assert alias.output == 12


async def test_a_pinned_default_wins_over_the_latest_and_can_be_unpinned() -> None:
    registry = ToolRegistry()
    registry.register(convert_v2)
    registry.register(convert_v1, default=True)
    assert (await registry.call("convert", {"feet": 1})).output == 12
    registry.pin_version("convert", None)
    assert (await registry.call("convert", {"feet": 1})).output == 0.3048
    with pytest.raises(SatchelUsageError, match="no version '7'"):
        registry.pin_version("convert", "7")


async def test_versions_order_naturally_and_register_takes_a_version() -> None:
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    @tool(name="echo")
    def echo_loud(text: str) -> str:
        """Echo loudly."""
        return text.upper()

    registry = ToolRegistry()
    registry.register(echo_loud, version="10")
    registry.register(echo, version="9")
    assert registry.default_version("echo") == "10"
    assert list(registry.versions("echo")) == ["9", "10"]
    assert (await registry.call("echo@9", {"text": "a"})).output == "a"
    assert (await registry.call("echo", {"text": "a"})).output == "A"


def test_a_taken_version_or_an_unversioned_clash_needs_replace() -> None:
    registry = _registry()
    with pytest.raises(SatchelUsageError, match="Version '2'"):
        registry.register(convert_v2)
    with pytest.raises(SatchelUsageError, match="version"):
        registry.register(convert_v2, version="bad version!")


async def test_unregistering_one_version_keeps_the_others() -> None:
    registry = _registry()
    registry.unregister("convert@2")
    assert registry.default_version("convert") == "1"
    assert (await registry.call("convert", {"feet": 1})).output == 12
    assert (await registry.call("convert@2", {"feet": 1})).error is not None
    registry.unregister("convert")
    assert "convert" not in registry


async def test_a_view_keeps_the_versions_and_follows_new_ones() -> None:
    registry = ToolRegistry([convert_v1])
    view = prefixed(registry, "units")
    registry.register(convert_v2)
    assert view.default_version("units_convert") == "2"
    older = await view.call("units_convert@1", {"feet": 1})
    assert older.output == 12
    assert older.notice is not None


async def test_the_meta_tools_show_which_version_they_found() -> None:
    meta = MetaTools(_registry(), embedder=None)
    found = await meta.registry.call("discover_tools", {"query": "convert feet"})
    schema = await meta.registry.call("get_tool_schema", {"tool_name": "convert@1"})
    ran = await meta.registry.call(
        "invoke_tool", {"tool_name": "convert@1", "parameters": {"feet": 2}}
    )
    assert found.output["versions"] == {"convert": "2"}
    assert schema.output["version"] == "1"
    assert schema.output["versions"] == ["1", "2"]
    assert schema.output["deprecated"] == "use convert@2, which returns metres"
    assert ran.output == 24
    assert ran.notice is not None


async def test_register_can_deprecate_and_a_chain_can_call_a_pinned_version() -> None:
    @tool(name="convert")
    def convert_v3(feet: float) -> float:
        """Convert feet to centimetres."""
        return feet * 30.48

    registry = ToolRegistry([convert_v2])
    registry.register(convert_v3, version="3", deprecated="centimetres confuse people")
    registry.register(chain("metres", "convert@2", description="Feet to metres, version 2."))
    latest = await registry.call("convert", {"feet": 1})
    chained = await registry.call("metres", {"feet": 10})
    assert latest.notice == "convert@3 is deprecated: centimetres confuse people"
    assert chained.output == {"result": 3.048}
    assert chained.notice is None


async def test_a_merged_registry_shows_every_version_of_its_sources() -> None:
    catalog = merged(_registry(), ToolRegistry())
    assert list(catalog.versions("convert")) == ["1", "2"]
    older = await catalog.call("convert@1", {"feet": 1})
    assert older.output == 12
