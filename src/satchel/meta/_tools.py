"""The three meta-tools a model sees in place of a large catalog.

Their descriptions and schemas are deliberately short: they are sent with every model
request, and their whole point is to cost a small fraction of the catalog they stand
for. The flow they teach: ``discover_tools`` → ``get_tool_schema`` → ``invoke_tool``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar, Final

from pydantic import BaseModel, ConfigDict, Field

from satchel.compat import agenticpal_result
from satchel.meta._seed_shapes import seed_rows, seed_schema
from satchel.tools import (
    ArgumentsError,
    BaseTool,
    ToolAnnotations,
    ToolContext,
    ToolMetadata,
    ToolResult,
    ToolSpec,
    build_plan,
    result_from_exception,
    validate_with_coercion,
)

if TYPE_CHECKING:
    from satchel.meta._meta import MetaTools

__all__ = ["MAX_LIMIT", "DiscoverTools", "GetToolSchema", "InvokeTool"]

MAX_LIMIT: Final = 25
"""The most entries one ``discover_tools`` call returns."""

FLOW_RULE: Final = (
    "Most tools are hidden: find one with discover_tools, read its parameters with "
    "get_tool_schema, run it with invoke_tool. Never guess parameters."
)


class DiscoverIn(BaseModel):
    # Arguments of ``discover_tools`` (no docstring: it would land in the schema).
    model_config = ConfigDict(extra="forbid")

    query: str = Field(default="", description="What you want to do.")
    categories: list[str] = Field(default_factory=list[str], description="Only these categories.")
    actions: list[str] = Field(default_factory=list[str], description="Only these actions.")
    limit: int = Field(default=5, ge=1, le=MAX_LIMIT)
    offset: int = Field(default=0, ge=0)


class SchemaIn(BaseModel):
    # Arguments of ``get_tool_schema`` (no docstring: it would land in the schema).
    model_config = ConfigDict(extra="forbid")

    tool_name: str


class InvokeIn(BaseModel):
    # Arguments of ``invoke_tool`` (no docstring: it would land in the schema).
    model_config = ConfigDict(extra="forbid")

    tool_name: str
    parameters: dict[str, Any] = Field(default_factory=dict[str, Any])
    approval_id: str = Field(default="", description="Given by pending_confirmation.")


class _MetaTool(BaseTool):
    """A meta-tool: a typed input, an output for the model, bound to its
    :class:`MetaTools`."""

    name: ClassVar[str]
    description: ClassVar[str]
    usage_rule: ClassVar[str | None] = None
    input_model: ClassVar[type[BaseModel]]
    annotations: ClassVar[ToolAnnotations]

    def __init__(self, meta: MetaTools) -> None:
        self.meta = meta
        plan = build_plan(
            name=self.name,
            description=self.description,
            input_type=self.input_model,
            output_type=Any,
            meta=ToolMetadata(
                usage_rule=self.usage_rule, category="meta", annotations=self.annotations
            ),
        )
        self._validate = plan.validate
        self._spec = plan.spec.model_copy(update={"output_schema": None, "output_wrapped": False})

    @property
    def spec(self) -> ToolSpec:
        """The meta-tool's definition."""
        return self._spec

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate ``args`` and run."""
        try:
            params, _ = validate_with_coercion(self._validate, args)
        except ArgumentsError as exc:
            refused = ToolResult(self.name, error=exc.error)
            return agenticpal_result(refused) if self.meta.compat == "agenticpal" else refused
        try:
            result = await self.run(params, ctx)
        except Exception as exc:  # the boundary: never raise for a model's call
            result = result_from_exception(self.name, exc)
        if self.meta.compat == "agenticpal" and result.error is not None:
            return agenticpal_result(result)
        return result

    async def run(self, params: Any, ctx: ToolContext) -> ToolResult:
        """Do the work on validated ``params``."""
        raise NotImplementedError


class DiscoverTools(_MetaTool):
    """``discover_tools``: search the catalog, or list its categories."""

    name = "discover_tools"
    description = (
        "Find tools for a task: give query (what you want to do) and/or categories or "
        "actions; none lists categories."
    )
    usage_rule = FLOW_RULE
    input_model = DiscoverIn
    annotations = ToolAnnotations(read_only=True, idempotent=True, open_world=False)

    async def run(self, params: DiscoverIn, ctx: ToolContext) -> ToolResult:
        """Search, or give the overview."""
        bad_categories, bad_actions = self.meta.index.unknown_filters(
            params.categories, params.actions
        )
        if bad_categories or bad_actions:
            return self.meta.unknown_filters_result(bad_categories, bad_actions)
        found = await self.meta.discover(
            query=params.query,
            categories=params.categories,
            actions=params.actions,
            limit=params.limit,
            offset=params.offset,
            ctx=ctx,
        )
        if self.meta.compat == "agenticpal" and found.categories is None:
            return ToolResult(self.name, {"tools": seed_rows(found.tools, self.meta.source)})
        return ToolResult(self.name, found.for_model())


class GetToolSchema(_MetaTool):
    """``get_tool_schema``: one tool's full definition in the served dialect."""

    name = "get_tool_schema"
    description = "Get a tool's full definition (its parameters) before invoking it."
    input_model = SchemaIn
    annotations = ToolAnnotations(read_only=True, idempotent=True, open_world=False)

    async def run(self, params: SchemaIn, ctx: ToolContext) -> ToolResult:
        """Look the tool up."""
        if self.meta.compat == "agenticpal":
            tool = self.meta.source.get(params.tool_name)
            if tool is not None:
                return ToolResult(self.name, seed_schema(tool.spec))
        definition = self.meta.tool_schema(params.tool_name)
        if definition is None:
            return self.meta.unknown_tool_result(self.name, params.tool_name)
        return ToolResult(self.name, definition)


class InvokeTool(_MetaTool):
    """``invoke_tool``: run a catalog tool, destructive calls gated by approval."""

    name = "invoke_tool"
    description = (
        "Run a tool with parameters that fit its schema. If it answers "
        "pending_confirmation, ask the user to approve, then call again with the same "
        "parameters and the approval_id."
    )
    input_model = InvokeIn
    annotations = ToolAnnotations(read_only=False, open_world=True)

    async def run(self, params: InvokeIn, ctx: ToolContext) -> ToolResult:
        """Call through the catalog."""
        result = await self.meta.invoke(
            params.tool_name,
            params.parameters,
            approval_id=params.approval_id or None,
            ctx=ctx,
        )
        result = self.meta.shaped(result, params.tool_name)
        return dataclasses.replace(result, tool=self.name)
