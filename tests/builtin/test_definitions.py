"""The built-in tools' definitions: names, fields and annotations are the public
contract, and every schema passes every provider dialect's checker."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from satchel._errors import SatchelUsageError
from satchel.builtin import (
    BlueskyEndpoint,
    DiscordEndpoint,
    MessageRouter,
    WebhookEndpoint,
    memory_toolset,
)
from satchel.memory import SQLiteStore
from satchel.registry import ToolRegistry
from satchel.schema import DIALECTS, Dialect, check_definition


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToolRegistry]:
    """The built-ins with every channel configured (Discord with an allow-list)."""
    store = SQLiteStore(tmp_path_factory.mktemp("defs") / "m.db", embedder=None)
    endpoints = {
        "discord": DiscordEndpoint("t", channels={"general": "111", "ops": "222"}),
        "bluesky": BlueskyEndpoint("me.bsky.social", "p"),
        "webhook": WebhookEndpoint(allowed_urls=["https://hooks.example.com/"]),
    }
    yield memory_toolset(store, router=MessageRouter(store, endpoints=endpoints))
    anyio.run(store.close)


@pytest.fixture(scope="module")
def plain_tools(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToolRegistry]:
    """The built-ins with no channel configured."""
    store = SQLiteStore(tmp_path_factory.mktemp("plain") / "m.db", embedder=None)
    yield memory_toolset(store)
    anyio.run(store.close)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_builtin_definition_passes_the_dialect_checker(
    tools: ToolRegistry, plain_tools: ToolRegistry, dialect: Dialect
) -> None:
    for definition in [*tools.schemas(dialect), *plain_tools.schemas(dialect)]:
        assert check_definition(definition, dialect) == [], definition


def test_with_no_channel_configured_send_message_offers_user_agent_and_group_only(
    plain_tools: ToolRegistry,
) -> None:
    spec = plain_tools.specs()[-1]
    options = spec.input_schema["properties"]["target"]["oneOf"]

    assert spec.name == "send_message"
    assert [o["properties"]["type"]["const"] for o in options] == ["user", "agent", "group"]
    assert "discord" not in str(spec.input_schema).lower()
    assert "Discord" not in spec.description


def test_the_tools_and_their_operations_match_the_design_table(tools: ToolRegistry) -> None:
    specs = {spec.name: spec for spec in tools.specs()}

    assert list(specs) == ["context", "recall", "search", "send_message"]
    fields = {name: (op.fields, op.required) for name, op in specs["context"].operations.items()}
    assert fields == {
        "append": (("label", "content"), ("label", "content")),
        "replace": (("label", "old", "new"), ("label", "old", "new")),
        # Beyond the design table: a create that never overwrites, so making a new block
        # needs no approval where set (destructive) does.
        "create": (("label", "value", "description"), ("label", "value")),
        "set": (("label", "value", "description"), ("label", "value")),
        # Beyond the design table: the seed's target labels (issue 18), all optional.
        "archive": (("label", "target_label"), ("label",)),
        "load": (("label", "target_label"), ("label",)),
        "swap": (
            ("archive_label", "load_label", "archive_target", "load_target"),
            ("archive_label", "load_label"),
        ),
        "list": ((), ()),
    }
    recall = {name: (op.fields, op.required) for name, op in specs["recall"].operations.items()}
    assert recall == {
        "insert": (("content", "label", "tags"), ("content",)),
        "append": (("label", "content"), ("label", "content")),
        "read": (("label",), ("label",)),
        "delete": (("label",), ("label",)),
    }
    search = specs["search"].input_schema
    assert list(search["properties"]) == ["domain", "query", "limit", "filters"]
    assert search["properties"]["domain"]["enum"] == ["archival_memory", "conversations", "all"]
    filters = search["properties"]["filters"]
    filter_props = next(f for f in filters.get("anyOf", [filters]) if f.get("type") == "object")
    assert list(filter_props["properties"]) == [
        *("role", "start_time", "end_time", "tags", "labels"),
        "tool_traffic",  # issue 27: tool traffic is left out unless asked for
    ]
    send = specs["send_message"].input_schema
    assert list(send["properties"]) == ["target", "content", "metadata"]
    types = [v["properties"]["type"]["const"] for v in send["properties"]["target"]["oneOf"]]
    assert types == ["user", "agent", "group", "discord", "bluesky", "webhook"]


def test_annotations_mark_reads_overwrites_and_deletes(tools: ToolRegistry) -> None:
    specs = {spec.name: spec for spec in tools.specs()}
    ops = specs["context"].operations
    recall = specs["recall"].operations

    assert ops["list"].annotations.read_only is True
    assert ops["set"].annotations.destructive is True
    assert ops["replace"].annotations.destructive is True
    assert ops["append"].annotations.destructive is False
    # with a target label, archive and swap remove the block (hint only: admin decides)
    assert ops["archive"].annotations.destructive is True
    assert ops["swap"].annotations.destructive is True
    assert ops["load"].annotations.destructive is False
    assert recall["delete"].annotations.destructive is True
    assert recall["read"].annotations.read_only is True
    assert specs["search"].annotations.read_only is True
    assert specs["send_message"].annotations.open_world is True
    assert specs["send_message"].usage_rule == "When send_message is called, the turn ends."


def test_registering_twice_fails_loudly_unless_replacing(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "m.db", embedder=None)
    try:
        registry = memory_toolset(store)
        with pytest.raises(SatchelUsageError, match="already registered"):
            memory_toolset(store, registry=registry)
        assert memory_toolset(store, registry=registry, replace=True) is registry
        registry.unregister("send_message")
        assert registry.names() == ["context", "recall", "search"]
    finally:
        anyio.run(store.close)


def test_all_is_sorted_complete_and_documented() -> None:
    module = importlib.import_module("satchel.builtin")
    exported = list(module.__all__)
    assert exported == sorted(exported)
    public = {
        n for n, v in vars(module).items() if not n.startswith("_") and not inspect.ismodule(v)
    }
    assert public <= set(exported), public - set(exported)
    for name in exported:
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"{name} has no docstring"
