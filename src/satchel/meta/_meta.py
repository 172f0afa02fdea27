""":class:`MetaTools`: three tools in place of a whole catalog.

The model sees ``discover_tools``, ``get_tool_schema`` and ``invoke_tool`` (plus a few
pinned tools); the catalog's own schemas are loaded one at a time, when the model asks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Sequence
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from satchel._errors import InvalidInputError, SatchelUsageError
from satchel.compat import (
    CompatProfile,
    agenticpal_result,
    check_profile,
    compat_spec,
    pattern_result,
)
from satchel.consent import ApprovalPolicy, PermissionBroker, gated_call
from satchel.embed import Embedder, default_embedder
from satchel.meta._catalog import CatalogIndex
from satchel.meta._entry import CatalogEntry
from satchel.meta._learning import UsageLearning
from satchel.meta._ranking import DEFAULT_RANKING, Ranking
from satchel.meta._tools import DiscoverTools, GetToolSchema, InvokeTool
from satchel.meta._usage import LearnedPair, MemoryUsageStore, UsageStore, catalog_id
from satchel.registry import BaseRegistry, RegistryEvent, ToolRegistry, WrapperTool
from satchel.schema import Dialect, tool_definition
from satchel.tools import (
    ArgumentsError,
    BaseTool,
    ErrorInfo,
    ToolContext,
    ToolResult,
    ToolSpec,
    decode_arguments,
    result_from_exception,
)

__all__ = ["ENTRY_COLUMNS", "Discovery", "MetaTools"]

ENTRY_COLUMNS: Final = ("name", "summary", "category", "actions", "is_write")
"""The columns of each ``discover_tools`` row, in order."""
_INVOKE_HINT: Final = (
    "call invoke_tool again with the same tool_name and parameters plus this approval_id"
)


class Discovery(BaseModel):
    """What :meth:`MetaTools.discover` found.

    Attributes:
        tools: The matching entries, best first (empty for the overview).
        total: How many tools passed the filters (the whole catalog without filters).
        ranked: True when a query ranked the tools (every tool passing the filters is
            a candidate, so :attr:`total` counts candidates, not matches).
        categories: For the overview (no query, no filter): tools per category.
        actions: For the overview: tools per declared action.
        offset: How many of the best entries this page skipped.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tools: list[CatalogEntry]
    total: int
    ranked: bool = False
    categories: dict[str, int] | None = None
    actions: dict[str, int] | None = None
    offset: int = 0

    def for_model(self) -> dict[str, Any]:
        """The compact form a model reads: one row per tool under ``columns`` (and
        ``needs_approval``: the names of those whose calls, or some of them, wait for a
        human's approval; ``versions``: the version found of each versioned tool), or
        the category counts."""
        if self.categories is not None:
            out: dict[str, Any] = {"total": self.total, "categories": self.categories}
            if self.actions:
                out["actions"] = self.actions
            out["next"] = "Call discover_tools with a query and/or categories."
            return out
        rows = [e.row() for e in self.tools]
        out = {"columns": list(ENTRY_COLUMNS), "tools": rows}
        held = [e.name for e in self.tools if e.needs_approval]
        if held:
            out["needs_approval"] = held
        versions = {e.name: e.version for e in self.tools if e.version is not None}
        if versions:
            out["versions"] = versions
        if not rows:
            out["next"] = "Nothing matched; try other words or no filters."
        elif self.total > self.offset + len(rows):
            if not self.ranked:
                out["more"] = self.total - self.offset - len(rows)
            out["next_offset"] = self.offset + len(rows)
        return out


class _Pinned(WrapperTool):
    """A pinned tool, its calls gated like ``invoke_tool``'s."""

    def __init__(
        self,
        inner: BaseTool,
        broker: PermissionBroker,
        policy: ApprovalPolicy,
        learning: UsageLearning,
        meta: MetaTools,
    ) -> None:
        super().__init__(inner)
        self.broker = broker
        self.policy = policy
        self.learning = learning
        self.meta = meta
        profile = meta.compat
        self._spec = inner.spec if profile is None else compat_spec(inner.spec, profile)

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result = await gated_call(
            self.inner.spec,
            args,
            ctx,
            self.broker,
            self.inner.call,
            retry_hint=_INVOKE_HINT,
            policy=self.policy,
        )
        if result.ok:
            await self.learning.succeeded(self.inner.spec.name, ctx)
        return self.meta.shaped(result, self.inner.spec.name)


class MetaTools:
    """Lazy loading for a large catalog: three meta-tools stand in for every tool.

    ``discover_tools`` ranks the catalog by a query (hybrid BM25 + embeddings) and
    filters it by category and action; ``get_tool_schema`` returns one tool's full
    definition in the served dialect; ``invoke_tool`` validates and runs a tool, a call
    the :attr:`approval` policy holds (a destructive one, by default; never a memory
    tool's) only with a human's approval through :attr:`broker`.

    :attr:`registry` holds the three tools (and the pinned ones), so it can be served
    anywhere a registry can: direct calls, provider schemas, MCP.

    Args:
        registry: The catalog. It is followed as it changes.
        broker: Decides approvals of destructive calls; a new in-memory
            :class:`~satchel.consent.PermissionBroker` when ``None`` (approve through
            :attr:`broker` from Python).
        embedder: ``"default"`` (the bundled MiniLM model), any
            :class:`~satchel.embed.Embedder`, or ``None`` for BM25 only.
        dialect: The dialect ``get_tool_schema`` answers in.
        pinned: Names of catalog tools to show beside the meta-tools.
        ranking: How queries rank tools.
        approval: Which calls of ``invoke_tool`` and the pinned tools wait for a human
            (:class:`~satchel.consent.ApprovalPolicy`); ``discover_tools`` rows say so
            in their ``needs_approval`` column.
        learn: Learn from use: a ``discover_tools`` query followed by a successful
            call of a tool (through ``invoke_tool`` or pinned) in the same session is
            stored in ``usage`` and ranks that tool for similar queries from then on.
            ``False`` records nothing (stored pairs still rank).
        usage: Where learned pairs live: a new in-memory
            :class:`~satchel.meta.MemoryUsageStore` when ``None``, or a
            :class:`~satchel.meta.SQLiteUsageStore` to keep them across processes.
        catalog: The id learned pairs are kept under; by default derived from the
            catalog's tool names when the meta-tools are made
            (:func:`~satchel.meta.catalog_id`).
        compat: Answer in a seed's shapes (:data:`~satchel.compat.CompatProfile`):
            ``"agenticpal"`` gives ``discover_tools`` rows as objects (with the seed's
            category and action names), ``get_tool_schema`` as ``{name, description,
            parameters, required, is_write}``, ``invoke_tool`` results as ``{success,
            message, data}``, errors as ``{success: false, message, error}`` and held
            calls as ``pending_confirmation`` with ``tool_name`` and ``parameters``;
            ``"pattern"`` gives ``send_message`` as ``{success, message}``. ``None``
            (the default): satchel's own shapes.

    Raises:
        SatchelUsageError: A pinned name is not in the catalog or is a meta-tool's name.

    Example:
        >>> meta = MetaTools(big_registry, pinned=["search"])
        >>> meta.registry.schemas("anthropic")      # 3 meta-tools + search
        >>> await meta.registry.call("discover_tools", {"query": "open a pull request"})
    """

    def __init__(
        self,
        registry: BaseRegistry,
        *,
        broker: PermissionBroker | None = None,
        embedder: Embedder | Literal["default"] | None = "default",
        dialect: Dialect = "mcp",
        pinned: Sequence[str] = (),
        ranking: Ranking = DEFAULT_RANKING,
        approval: ApprovalPolicy = ApprovalPolicy.DESTRUCTIVE,
        learn: bool = True,
        usage: UsageStore | None = None,
        catalog: str | None = None,
        compat: CompatProfile | None = None,
    ) -> None:
        self.compat: CompatProfile | None = check_profile(compat)
        self.source = registry
        self.broker = broker if broker is not None else PermissionBroker()
        self.approval = ApprovalPolicy(approval)
        self.dialect: Dialect = dialect
        model = default_embedder() if embedder == "default" else embedder
        self.index = CatalogIndex(registry, embedder=model, ranking=ranking, approval=self.approval)
        self.learning = UsageLearning(
            self.index,
            usage if usage is not None else MemoryUsageStore(),
            catalog or catalog_id(registry.names()),
            enabled=learn,
        )
        meta_tools: list[BaseTool] = [DiscoverTools(self), GetToolSchema(self), InvokeTool(self)]
        self.registry = ToolRegistry(meta_tools, context=registry.context)
        self.pinned = tuple(dict.fromkeys(pinned))
        for name in self.pinned:
            if name in self.registry:
                raise SatchelUsageError(f"Cannot pin {name!r}: it is a meta-tool's name.")
            tool = registry.get(name)
            if tool is None:
                close = registry.suggest(name)
                hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
                raise SatchelUsageError(f"Cannot pin {name!r}: no such tool.{hint}")
            self.registry.register(_Pinned(tool, self.broker, self.approval, self.learning, self))
        self._unsubscribe: Callable[[], None] | None = (
            registry.subscribe(self._on_change) if self.pinned else None
        )

    def _on_change(self, event: RegistryEvent) -> None:
        if event.name not in self.pinned:
            return
        tool = self.source.get(event.name)
        if tool is None:
            if event.name in self.registry:
                self.registry.unregister(event.name)
        else:
            self.registry.register(
                _Pinned(tool, self.broker, self.approval, self.learning, self), replace=True
            )

    def close(self) -> None:
        """Stop following the catalog (idempotent)."""
        self.index.close()
        unsubscribe, self._unsubscribe = self._unsubscribe, None
        if unsubscribe is not None:
            unsubscribe()

    async def prepare(self) -> None:
        """Load the learned pairs and embed the whole catalog now (otherwise the first
        query does it)."""
        await self.learning.ensure_loaded()
        await self.index.prepare()

    @property
    def catalog_id(self) -> str:
        """The id this catalog's learned pairs are kept under."""
        return self.learning.catalog

    def by_category(self) -> dict[str, list[str]]:
        """The tool names of each category (see :meth:`CatalogIndex.by_category`)."""
        return self.index.by_category()

    def by_action(self) -> dict[str, list[str]]:
        """The tool names declaring each action (see :meth:`CatalogIndex.by_action`)."""
        return self.index.by_action()

    # -- learning from use ----------------------------------------------------------

    async def add_learned(self, query: str, tool: str) -> LearnedPair:
        """Teach that ``tool`` serves ``query`` (as a successful call after
        ``discover_tools(query)`` does).

        Raises:
            InvalidInputError: An empty or overlong query, or no such tool.
            StorageError: The usage store failed.

        Example:
            >>> await meta.add_learned("mail the invoice to Bob", "send_email")
        """
        if not isinstance(tool, str) or tool not in self.source:  # pyright: ignore[reportUnnecessaryIsInstance]
            close = self.source.suggest(str(tool))
            hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
            raise InvalidInputError(f"There is no tool called {tool!r} to learn.{hint}")
        await self.learning.ensure_loaded()
        return await self.learning.add(query, tool)

    async def learned(self, tool: str | None = None) -> list[LearnedPair]:
        """The learned pairs (only ``tool``'s when given), most recently used first."""
        return await self.learning.pairs(tool)

    async def forget_learned(self, *, query: str | None = None, tool: str | None = None) -> int:
        """Forget the learned pairs matching ``query`` and/or ``tool`` (all of them when
        both are ``None``); returns how many went."""
        await self.learning.ensure_loaded()
        return await self.learning.forget(query=query, tool=tool)

    # -- what the three tools do --------------------------------------------------

    async def discover(
        self,
        query: str = "",
        *,
        categories: Collection[str] = (),
        actions: Collection[str] = (),
        limit: int = 5,
        offset: int = 0,
        ctx: ToolContext | None = None,
    ) -> Discovery:
        """Search the catalog, or (no query, no filter) count tools per category.

        With ``ctx``, the query is remembered for that session: a successful call that
        follows teaches the ranking (see ``learn``).

        Raises:
            SatchelUsageError: An unknown category or action.
        """
        if not query.strip() and not categories and not actions:
            return Discovery(
                tools=[],
                total=len(self.index),
                categories=self.index.categories(),
                actions=self.index.actions(),
            )
        await self.learning.ensure_loaded()
        entries, total = await self.index.search(
            query, categories=categories, actions=actions, limit=limit, offset=offset
        )
        if ctx is not None:
            self.learning.noted(query, ctx)
        return Discovery(
            tools=entries, total=total, ranked=bool(query.strip()), offset=max(0, offset)
        )

    def tool_schema(self, tool_name: str) -> dict[str, Any] | None:
        """The full definition of a catalog tool in :attr:`dialect` (with its
        ``usage_rule`` beside it when it has one), or ``None``."""
        tool = self.source.get(tool_name)
        if tool is None:
            return None
        spec = tool.spec
        definition = tool_definition(
            spec.name,
            spec.description,
            spec.input_schema,
            self.dialect,
            output_schema=spec.output_schema,
            annotations=_hints(spec.annotations.model_dump(), spec.is_destructive(), spec.is_write),
        )
        if spec.usage_rule:
            definition["usage_rule"] = spec.usage_rule
        if spec.version is not None:
            definition["version"] = spec.version
            definition["versions"] = list(self.source.versions(spec.name))
        if spec.deprecated:
            definition["deprecated"] = spec.deprecated
        if spec.examples:
            definition["examples"] = list(spec.examples)
        return definition

    async def invoke(
        self,
        tool_name: str,
        parameters: Any = None,
        *,
        approval_id: str | None = None,
        ctx: ToolContext | None = None,
    ) -> ToolResult:
        """Validate and run a catalog tool; a call the :attr:`approval` policy holds
        needs an approval bound to ``ctx.agent`` (see
        :func:`~satchel.consent.gated_call`). Never raises for a model's error.

        Args:
            tool_name: The tool.
            parameters: Its arguments (a dict, JSON text, or ``None``).
            approval_id: The id of a human's approval, for a destructive call.
            ctx: The caller's context (the catalog's default when ``None``).
        """
        tool = self.source.get(tool_name)
        if tool is None:
            return self.unknown_tool_result(tool_name, tool_name)
        try:
            args = decode_arguments(parameters)
        except ArgumentsError as exc:
            return ToolResult(tool_name, error=exc.error)
        context = ctx or self.source.context
        if approval_id:
            context = dataclasses.replace(context, approval_id=approval_id)

        async def run(arguments: dict[str, Any], run_ctx: ToolContext) -> ToolResult:
            try:
                return await tool.call(arguments, run_ctx)
            except Exception as exc:  # a tool that broke its own contract
                return result_from_exception(tool_name, exc)

        result = await gated_call(
            tool.spec,
            args,
            context,
            self.broker,
            run,
            retry_hint=_INVOKE_HINT,
            policy=self.approval,
        )
        if result.ok:
            await self.learning.succeeded(tool_name, context)
        return result

    def shaped(self, result: ToolResult, tool: str) -> ToolResult:
        """A catalog tool's ``result`` in :attr:`compat`'s shapes (unchanged without a
        profile)."""
        if self.compat == "agenticpal":
            return agenticpal_result(result)
        if self.compat == "pattern":
            return pattern_result(result, tool)
        return result

    # -- the seed's method calls ----------------------------------------------------

    async def discover_tools(
        self,
        categories: Sequence[str] | None = None,
        actions: Sequence[str] | None = None,
        query: str | None = None,
        *,
        ctx: ToolContext | None = None,
    ) -> dict[str, Any]:
        """``discover_tools`` as a method (AgenticPal's ``meta_tools.discover_tools``):
        what the model would read, as a dict.

        Example:
            >>> await meta.discover_tools(categories=["calendar"], actions=["create"])
        """
        args: dict[str, Any] = {
            "categories": list(categories or ()),
            "actions": list(actions or ()),
        }
        if query:
            args["query"] = query
        return await self._answer("discover_tools", args, ctx)

    async def get_tool_schema(
        self, tool_name: str, *, ctx: ToolContext | None = None
    ) -> dict[str, Any]:
        """``get_tool_schema`` as a method: the tool's definition, as a dict."""
        return await self._answer("get_tool_schema", {"tool_name": tool_name}, ctx)

    async def invoke_tool(
        self,
        tool_name: str,
        parameters: dict[str, Any] | None = None,
        *,
        approval_id: str | None = None,
        ctx: ToolContext | None = None,
    ) -> dict[str, Any]:
        """``invoke_tool`` as a method (AgenticPal's ``meta_tools.invoke_tool``): the
        result the model would read, as a dict (``pending_confirmation`` for a held
        call).

        Example:
            >>> await meta.invoke_tool("delete_calendar_event", {"event_id": "abc123"})
        """
        args: dict[str, Any] = {"tool_name": tool_name, "parameters": parameters or {}}
        if approval_id:
            args["approval_id"] = approval_id
        return await self._answer("invoke_tool", args, ctx)

    async def _answer(
        self, tool: str, args: dict[str, Any], ctx: ToolContext | None
    ) -> dict[str, Any]:
        result = await self.registry.call(tool, args, ctx)
        if result.presented is not None:
            return dict(result.presented)
        if result.error is not None:
            return result.to_dict()
        return result.structured() or {"result": result.output}

    # -- errors in words a model can act on -----------------------------------------

    def unknown_tool_result(self, tool: str, name: str) -> ToolResult:
        """``unknown_tool``, with the closest names."""
        close = self.source.suggest(str(name))
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        return ToolResult(
            tool,
            error=ErrorInfo(
                "unknown_tool",
                f"There is no tool called {name!r}.{hint} Use discover_tools to find one.",
                {"suggestions": close},
            ),
        )

    def unknown_filters_result(self, categories: list[str], actions: list[str]) -> ToolResult:
        """``invalid_arguments`` naming the unknown filters and listing the valid ones."""
        valid_c, valid_a = sorted(self.index.categories()), sorted(self.index.actions())
        lines: list[str] = []
        if categories:
            lines.append(
                f"Unknown categories {categories}; valid: {', '.join(valid_c) or '(none)'}."
            )
        if actions:
            lines.append(f"Unknown actions {actions}; valid: {', '.join(valid_a) or '(none)'}.")
        return ToolResult(
            "discover_tools",
            error=ErrorInfo(
                "invalid_arguments",
                " ".join(lines),
                {
                    "unknown_categories": categories,
                    "unknown_actions": actions,
                    "valid_categories": valid_c,
                    "valid_actions": valid_a,
                },
            ),
        )


def _hints(
    base: dict[str, bool | None], destructive: bool, is_write: bool
) -> dict[str, bool | None]:
    """A tool's MCP-style hints, counting every operation of a multi-operation tool."""
    hints = dict(base)
    if destructive:
        hints["destructive"] = True
    if not is_write:
        hints["read_only"] = True
    return hints
