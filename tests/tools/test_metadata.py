"""Every way of defining a tool takes the same options and builds the same spec."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from satchel import FunctionTool, RawTool, SatchelUsageError, Tool, ToolContext, ToolRegistry, tool
from satchel.tools import ToolAnnotations, ToolMetadata, ToolOptions, check_name, check_version

OPTIONS = ToolOptions(
    summary="Removes a note.",
    usage_rule="Ask first.",
    category="notes",
    actions=["delete"],
    idempotent=True,
)
SCHEMA = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}


class NoteId(BaseModel):
    id: str


class DropNote(Tool[NoteId, str]):
    name = "drop_note"
    description = "Delete a note."
    summary = OPTIONS["summary"]
    usage_rule = OPTIONS["usage_rule"]
    category = OPTIONS["category"]
    actions = ("delete",)
    idempotent = True

    async def execute(self, params: NoteId, ctx: ToolContext) -> str:
        return params.id


def drop_note(id: str) -> str:
    """Delete a note."""
    return id


def _raw(args: dict[str, Any]) -> str:
    return str(args["id"])


def test_tool_metadata_of_options_gathers_the_annotations() -> None:
    meta = ToolMetadata.of(OPTIONS)
    assert meta.annotations == ToolAnnotations(idempotent=True)
    assert (meta.category, meta.actions) == ("notes", ("delete",))


def test_the_four_ways_of_defining_a_tool_give_the_same_metadata() -> None:
    registry = ToolRegistry()
    registry.register_raw(
        name="drop_note", description="Delete a note.", parameters=SCHEMA, run=_raw, **OPTIONS
    )
    specs = [
        tool(**OPTIONS)(drop_note).spec,
        FunctionTool(drop_note, **OPTIONS).spec,
        RawTool(
            name="drop_note", description="Delete a note.", parameters=SCHEMA, run=_raw, **OPTIONS
        ).spec,
        registry.specs()[0],
        DropNote().spec,
    ]
    shown = {
        (
            s.summary,
            s.usage_rule,
            s.category,
            s.actions,
            s.annotations.destructive,
            s.annotations.idempotent,
        )
        for s in specs
    }
    assert shown == {("Removes a note.", "Ask first.", "notes", ("delete",), True, True)}


def test_annotations_for_an_operation_a_raw_tool_lacks_are_refused() -> None:
    with pytest.raises(SatchelUsageError, match="unknown operations"):
        RawTool(
            name="notes",
            description="Notes.",
            parameters=SCHEMA,
            run=_raw,
            operation_annotations={"purge": ToolAnnotations(destructive=True)},
        )


@pytest.mark.parametrize("value", [2, 2.5, b"v2", ["2"]])
def test_a_version_that_is_not_a_string_is_refused(value: object) -> None:
    with pytest.raises(SatchelUsageError, match=r"Tool version .* is invalid"):
        check_version(value)


def test_a_tool_class_with_an_int_version_is_refused_when_it_is_registered() -> None:
    class Versioned(DropNote):
        version = 2  # type: ignore[assignment]  # what an untyped subclass may write

    with pytest.raises(SatchelUsageError, match="Tool version 2 is invalid"):
        ToolRegistry([Versioned()])


@pytest.mark.parametrize("value", [None, 7, b"name"])
def test_a_name_that_is_not_a_string_is_refused(value: object) -> None:
    with pytest.raises(SatchelUsageError, match="Invalid tool name"):
        check_name(value)
