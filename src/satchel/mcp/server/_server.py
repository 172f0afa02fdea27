""":class:`SatchelServer`: any :class:`~satchel.ToolRegistry` served over MCP with the
official SDK's low-level server.

* ``tools/list`` is ``registry.schemas("mcp")``: annotations become MCP hints, a typed
  output comes with its ``outputSchema``.
* ``tools/call`` is ``registry.call(name, arguments, ctx)``. The result carries one text
  block (:meth:`ToolResult.to_text <satchel.ToolResult.to_text>`) and, for a structured
  output, ``structuredContent``. Every tool error, an unknown tool included, is an
  ``isError`` result with the error's message (and its kind and details under
  ``_meta["satchel/error"]``), never a JSON-RPC error.
* A client that sent a ``progressToken`` gets ``notifications/progress``: the call's
  :attr:`ToolContext.progress <satchel.ToolContext.progress>` sends them.
* The registry's changes reach clients as ``notifications/tools/list_changed``.
* An optional :class:`~satchel.mcp.ResourceProvider` serves ``resources/*``; with
  :class:`~satchel.mcp.ResourceVersions`, a subscribed URI whose resource changed gets
  ``notifications/resources/updated`` (:mod:`satchel.mcp.server._watch`).
* An optional :class:`~satchel.mcp.PromptProvider` serves ``prompts/*``.

Both MCP protocol eras are served: the ``initialize`` handshake (up to 2025-11-25) and
the 2026-07-28 per-request envelope, which the SDK's own client prefers.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.models import InitializationOptions
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.types import ASGIApp

from satchel._errors import SatchelUsageError
from satchel._throttle import LoginThrottle
from satchel._version import __version__
from satchel.mcp._wire import ALL_VERSIONS_META_KEY, ERROR_META_KEY, NOTICE_META_KEY
from satchel.mcp.server._channel import ClientChannel
from satchel.mcp.server._envelope import NamedInvalidParams, RequestIdGuard
from satchel.mcp.server._feed import SUBSCRIBED_URIS, ChangeFeed
from satchel.mcp.server._http import (
    DEFAULT_MAX_BODY_BYTES,
    BearerTokenMiddleware,
    PathMounts,
    run_uvicorn,
)
from satchel.mcp.server._projects import AgentResolver
from satchel.mcp.server._prompts import PromptProvider
from satchel.mcp.server._provided import (
    get_prompt,
    list_prompts,
    list_resource_templates,
    list_resources,
    read_resource,
)
from satchel.mcp.server._request_context import ContextFactory, RequestContexts
from satchel.mcp.server._resources import ResourceProvider, ResourceVersions
from satchel.mcp.server._stdio import DEFAULT_MAX_MESSAGE_BYTES, stdio_transport
from satchel.mcp.server._watch import DEFAULT_WATCH_INTERVAL, ResourceWatch, watched_by
from satchel.memory import MemoryStore
from satchel.registry import BaseRegistry
from satchel.tools import ToolContext, ToolResult

if TYPE_CHECKING:
    from satchel.builtin import MessageRouter
    from satchel.consent import PermissionBroker

__all__ = ["ContextFactory", "SatchelServer", "create_server"]

logger = logging.getLogger("satchel.mcp")


def _connection_of(ctx: ServerRequestContext[Any, Any]) -> Connection | None:
    # The SDK's ServerSession keeps its Connection private; it is the only handle on a
    # handshake-era connection's standalone channel and on its lifetime.
    connection = getattr(ctx.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


class _LowLevelServer(Server[ChangeFeed]):
    """The SDK server, with satchel's ``listChanged`` flags as the default options (the
    streamable HTTP manager asks for the defaults)."""

    def __init__(self, name: str, notify: NotificationOptions, **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self._satchel_notify = notify

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or self._satchel_notify, experimental_capabilities, extensions
        )


def _call_result(result: ToolResult) -> types.CallToolResult:
    text: list[types.ContentBlock] = [types.TextContent(text=result.to_text())]
    meta: dict[str, Any] = {NOTICE_META_KEY: result.notice} if result.notice else {}
    if result.error is not None:
        meta[ERROR_META_KEY] = result.error.to_dict()
        return types.CallToolResult(content=text, is_error=True, _meta=meta)
    return types.CallToolResult(
        content=text, structured_content=result.structured(), _meta=meta or None
    )


class SatchelServer:
    """Serves a :class:`~satchel.ToolRegistry` (and optionally resources) over MCP.

    Args:
        registry: The tools to serve. Later changes to it are served too, and announced
            to clients.
        name: The server's name, as clients show it.
        instructions: Text a client may add to its model's system prompt.
        agent: The agent id of every call, unless ``agents`` or ``ctx_factory`` says
            otherwise.
        agents: Decides each connection's agent instead (for example
            :class:`~satchel.mcp.ProjectAgents`: the project the client has open); told
            when a client's roots change.
        ctx_factory: Builds the :class:`~satchel.ToolContext` of a request from its
            :class:`ClientChannel` (the channel is added to ``extras`` if the factory
            leaves it out). By default: ``agent``, the origin (the request's
            ``_meta["satchel/origin"]``, else ``"mcp"``) and the request id.
        resources: Resources to serve next to the tools.
        prompts: Prompts to serve next to the tools.
        watch_interval: While a client is subscribed to a resource, look this often
            (seconds) for changes the server did not make itself, such as another
            process writing the same database; ``None`` to look only when told
            (:meth:`notify_resources_changed`). Needs a provider with
            :class:`~satchel.mcp.ResourceVersions`.
        memory: The memory store a tool reaches as ``ctx.memory`` (scoped to the
            request's agent, its writes carrying the request's origin and human).
        router: What a tool reaches as ``ctx.router``.
        broker: What a tool reaches as ``ctx.broker``.

    Raises:
        SatchelUsageError: ``watch_interval`` is not positive.

    Example:
        >>> server = create_server(registry)
        >>> anyio.run(server.run_stdio)
    """

    def __init__(
        self,
        registry: BaseRegistry,
        *,
        name: str = "satchel",
        instructions: str | None = None,
        agent: str = "default",
        agents: AgentResolver | None = None,
        ctx_factory: ContextFactory | None = None,
        resources: ResourceProvider | None = None,
        prompts: PromptProvider | None = None,
        watch_interval: float | None = DEFAULT_WATCH_INTERVAL,
        memory: MemoryStore | None = None,
        router: MessageRouter | None = None,
        broker: PermissionBroker | None = None,
    ) -> None:
        self.registry = registry
        self.agents = agents
        self._contexts = RequestContexts(
            agent=agent,
            agents=agents,
            factory=ctx_factory,
            memory=memory,
            router=router,
            broker=broker,
        )
        self._resources = resources
        self._prompts = prompts
        if watch_interval is not None and not watch_interval > 0:
            raise SatchelUsageError(
                f"watch_interval must be a positive number of seconds or None, "
                f"not {watch_interval!r}."
            )
        self._watch_interval = watch_interval
        self._feeds: set[ChangeFeed] = set()
        self._watches: dict[ChangeFeed, ResourceWatch] = {}
        self._tools_source: list[dict[str, Any]] | None = None
        self._tools_listing = types.ListToolsResult(tools=[])
        handlers: dict[str, Any] = {}
        if resources is not None:
            handlers = {
                "on_list_resources": self._list_resources,
                "on_list_resource_templates": self._list_resource_templates,
                "on_read_resource": self._read_resource,
                "on_subscribe_resource": self._subscribe,
                "on_unsubscribe_resource": self._unsubscribe,
            }
        if prompts is not None:
            handlers |= {"on_list_prompts": self._list_prompts, "on_get_prompt": self._get_prompt}
        self._server = _LowLevelServer(
            name,
            NotificationOptions(tools_changed=True, resources_changed=resources is not None),
            version=__version__,
            instructions=instructions,
            lifespan=self._lifespan,
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=self._listen,
            **handlers,
        )
        self._server.middleware.append(NamedInvalidParams())
        self._server.add_notification_handler(
            "notifications/initialized", types.NotificationParams, self._on_initialized
        )
        self._server.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, self._on_roots_changed
        )

    @property
    def agent(self) -> str:
        """The agent of every call that no resolver or factory decides."""
        return self._contexts.agent

    @property
    def lowlevel(self) -> Server[ChangeFeed]:
        """The SDK's low-level server, e.g. for ``mcp.Client(server.lowlevel)`` in tests."""
        return self._server

    # -- lifespan and change notifications -------------------------------------

    @asynccontextmanager
    async def _lifespan(self, _server: Server[ChangeFeed]) -> AsyncGenerator[ChangeFeed, None]:
        feed = ChangeFeed()
        unsubscribe = self.registry.subscribe(lambda _event: feed.tools_changed())
        try:
            async with feed.running(), anyio.create_task_group() as tg:
                if isinstance(self._resources, ResourceVersions):
                    watch = ResourceWatch(self._resources, feed, interval=self._watch_interval)
                    feed.on_resources_changed = watch.poke
                    self._watches[feed] = watch
                    tg.start_soon(watch.run)
                self._feeds.add(feed)
                try:
                    yield feed
                finally:
                    self._feeds.discard(feed)
                    self._watches.pop(feed, None)
                    tg.cancel_scope.cancel()
        finally:
            unsubscribe()

    def notify_resources_changed(self, uri: str | None = None) -> None:
        """Tell clients that the resource list changed (``uri`` is ``None``) or that the
        resource at ``uri`` did. Safe from any thread."""
        for feed in list(self._feeds):
            feed.resources_changed(uri)

    async def _on_initialized(
        self, ctx: ServerRequestContext[ChangeFeed, Any], _params: types.NotificationParams
    ) -> None:
        self._track(ctx)

    async def _on_roots_changed(
        self, ctx: ServerRequestContext[ChangeFeed, Any], _params: types.NotificationParams
    ) -> None:
        if self.agents is None:
            return
        self.agents.forget(ClientChannel(ctx))
        # the next request may use another project's memory: its context differs
        self.notify_resources_changed()

    @staticmethod
    def _track(ctx: ServerRequestContext[ChangeFeed, Any]) -> None:
        """Remember a handshake-era connection, to tell it of changes (done when it is
        initialized, and again on every ``tools/list`` so no race can miss it)."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        connection = _connection_of(ctx)
        if connection is not None and connection.has_standalone_channel:
            ctx.lifespan_context.track(connection)

    async def _listen(
        self,
        ctx: ServerRequestContext[ChangeFeed, Any],
        params: types.SubscriptionsListenRequestParams,
    ) -> types.SubscriptionsListenResult:
        watch = self._watches.get(ctx.lifespan_context)
        uris = list(params.notifications.resource_subscriptions or ())
        if watch is None or not uris:
            return await ctx.lifespan_context.listen(ctx, params)
        agent = (await self._context(ClientChannel(ctx))).agent
        added: list[str] = []
        try:
            for uri in uris:
                await watch.add(agent, uri)
                added.append(uri)
            return await ctx.lifespan_context.listen(ctx, params)
        finally:
            for uri in added:
                watch.remove(agent, uri)

    # -- tools -----------------------------------------------------------------

    async def _context(self, channel: ClientChannel) -> ToolContext:
        return await self._contexts.resolve(channel)

    def context_for(self, channel: ClientChannel, *, agent: str | None = None) -> ToolContext:
        """The :class:`~satchel.ToolContext` of a request (see ``ctx_factory``), for
        ``agent`` when given (the connection's, as ``agents`` decided)."""
        return self._contexts.build(channel, agent=agent)

    def _input_schema(self, name: str) -> Mapping[str, Any] | None:
        tool = self.registry.get(name)
        return None if tool is None else tool.spec.input_schema

    async def _list_tools(
        self,
        _ctx: ServerRequestContext[ChangeFeed, Any],
        params: types.PaginatedRequestParams | None,
    ) -> types.ListToolsResult:
        meta: Mapping[str, Any] = (params.meta if params is not None else None) or {}
        if meta.get(ALL_VERSIONS_META_KEY) is True:  # a mount: every version, named name_v1
            return types.ListToolsResult(
                tools=[
                    types.Tool.model_validate(d)
                    for d in self.registry.schemas("mcp", versions="all")
                ]
            )
        definitions = self.registry.schemas("mcp")
        if definitions is not self._tools_source:  # the registry rebuilt its cache
            self._tools_listing = types.ListToolsResult(
                tools=[types.Tool.model_validate(d) for d in definitions]
            )
            self._tools_source = definitions
        return self._tools_listing

    async def _call_tool(
        self, ctx: ServerRequestContext[ChangeFeed, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        channel = ClientChannel(ctx, input_responses=params.input_responses)
        result = await self.registry.call(
            params.name, params.arguments, await self._context(channel)
        )
        if result.error is not None:
            pending = channel.pending_input()
            if pending:
                return types.InputRequiredResult(input_requests=dict(pending))
        return _call_result(result)

    # -- resources -------------------------------------------------------------

    def _provider(self) -> ResourceProvider:
        assert self._resources is not None  # the handlers exist only with a provider
        return self._resources

    async def _list_resources(
        self,
        ctx: ServerRequestContext[ChangeFeed, Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListResourcesResult:
        return await list_resources(self._provider(), await self._context(ClientChannel(ctx)))

    async def _list_resource_templates(
        self,
        ctx: ServerRequestContext[ChangeFeed, Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListResourceTemplatesResult:
        tool_ctx = await self._context(ClientChannel(ctx))
        return await list_resource_templates(self._provider(), tool_ctx)

    async def _read_resource(
        self, ctx: ServerRequestContext[ChangeFeed, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        tool_ctx = await self._context(ClientChannel(ctx))
        return await read_resource(self._provider(), params.uri, tool_ctx)

    async def _subscribe(
        self, ctx: ServerRequestContext[ChangeFeed, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        connection = _connection_of(ctx)
        if connection is None:
            return types.EmptyResult()
        subscribed: set[str] = connection.state.setdefault(SUBSCRIBED_URIS, set())
        watch = self._watches.get(ctx.lifespan_context)
        if params.uri not in subscribed and watch is not None:
            agent = (await self._context(ClientChannel(ctx))).agent
            await watch.add(agent, params.uri)
            watched_by(connection, watch)[params.uri] = agent
        subscribed.add(params.uri)
        return types.EmptyResult()

    async def _unsubscribe(
        self, ctx: ServerRequestContext[ChangeFeed, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        connection = _connection_of(ctx)
        if connection is None:
            return types.EmptyResult()
        connection.state.get(SUBSCRIBED_URIS, set()).discard(params.uri)
        watch = self._watches.get(ctx.lifespan_context)
        if watch is not None:
            agent = watched_by(connection, watch).pop(params.uri, None)
            if agent is not None:
                watch.remove(agent, params.uri)
        return types.EmptyResult()

    # -- prompts ---------------------------------------------------------------

    def _prompt_provider(self) -> PromptProvider:
        assert self._prompts is not None  # the handlers exist only with a provider
        return self._prompts

    async def _list_prompts(
        self,
        ctx: ServerRequestContext[ChangeFeed, Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListPromptsResult:
        tool_ctx = await self._context(ClientChannel(ctx))
        return await list_prompts(self._prompt_provider(), tool_ctx)

    async def _get_prompt(
        self, ctx: ServerRequestContext[ChangeFeed, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        tool_ctx = await self._context(ClientChannel(ctx))
        return await get_prompt(self._prompt_provider(), params, tool_ctx)

    # -- transports ------------------------------------------------------------

    async def run_stdio(self, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        """Serve one client on this process's stdin and stdout until stdin closes.

        While serving, anything else written to stdout goes to stderr (see
        :mod:`satchel.mcp.server._stdio`).
        """
        async with stdio_transport(max_message_bytes=max_message_bytes) as (read, write):
            await self._server.run(read, write, self._server.create_initialization_options())

    def http_app(
        self,
        *,
        token: str | None = None,
        path: str = "/mcp",
        host: str = "127.0.0.1",
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        stateless: bool = False,
        json_response: bool = False,
        throttle: LoginThrottle | None = None,
    ) -> Starlette:
        """An ASGI app serving MCP over streamable HTTP at ``path``.

        Args:
            token: When set, every request must carry ``Authorization: Bearer
                <token>``; any other request gets HTTP 401 and nothing runs.
            path: The endpoint's path.
            host: The host the app is reached at; on a loopback host, requests whose
                ``Host`` or ``Origin`` is not loopback are refused (DNS rebinding).
            max_body_bytes: Larger request bodies get HTTP 413.
            stateless: Serve handshake-era clients without sessions.
            json_response: Answer with JSON bodies instead of SSE streams.
            throttle: Counts wrong tokens per client (HTTP 429 after a few); share it
                with anything else served that checks the same token.
        """
        app = self._server.streamable_http_app(
            streamable_http_path=path,
            host=host,
            max_request_body_size=max_body_bytes,
            stateless_http=stateless,
            json_response=json_response,
        )
        app.add_middleware(RequestIdGuard)
        if token:  # outermost: nothing is read before the token is checked
            app.add_middleware(BearerTokenMiddleware, token=token, throttle=throttle)
        return app

    async def run_http(
        self,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        token: str | None = None,
        path: str = "/mcp",
        on_ready: Callable[[str], None] | None = None,
        request_timeout: float | None = None,
        max_connections: int | None = None,
        mounts: Mapping[str, ASGIApp] | None = None,
        throttle: LoginThrottle | None = None,
    ) -> None:
        """Serve streamable HTTP on ``host:port`` until cancelled or interrupted.

        Args:
            host: The address to listen on.
            port: The port; ``0`` picks a free one (see ``on_ready``).
            token: The bearer token every request must carry, if any.
            path: The endpoint's path.
            on_ready: Called with the endpoint's URL once the socket listens.
            request_timeout: Seconds a connection may take to send a complete request
                before it is closed (see :func:`run_uvicorn`).
            max_connections: The most connections open at once; over it, the oldest
                idle connection is closed (see :func:`run_uvicorn`).
            mounts: Other apps served beside MCP, by path prefix (see
                :class:`~satchel.mcp.server._http.PathMounts`); they check their own
                callers (the token does not guard them).
            throttle: Counts wrong tokens per client; pass the mounted console's so
                every entry point shares one limit.
        """
        app: ASGIApp = self.http_app(token=token, path=path, host=host, throttle=throttle)
        if mounts:
            app = PathMounts(app, mounts)
        await run_uvicorn(
            app,
            host,
            port,
            path=path,
            on_ready=on_ready,
            request_timeout=request_timeout,
            max_connections=max_connections,
        )


def create_server(
    registry: BaseRegistry,
    *,
    name: str = "satchel",
    instructions: str | None = None,
    agent: str = "default",
    agents: AgentResolver | None = None,
    ctx_factory: ContextFactory | None = None,
    resources: ResourceProvider | None = None,
    prompts: PromptProvider | None = None,
    watch_interval: float | None = DEFAULT_WATCH_INTERVAL,
    memory: MemoryStore | None = None,
    router: MessageRouter | None = None,
    broker: PermissionBroker | None = None,
) -> SatchelServer:
    """Serve ``registry`` over MCP; see :class:`SatchelServer` for the arguments.

    Example:
        >>> server = create_server(registry, instructions="Use `notes` to remember.")
        >>> await server.run_http("127.0.0.1", 8765, token="s3cret")
    """
    return SatchelServer(
        registry,
        name=name,
        instructions=instructions,
        agent=agent,
        agents=agents,
        ctx_factory=ctx_factory,
        resources=resources,
        prompts=prompts,
        watch_interval=watch_interval,
        memory=memory,
        router=router,
        broker=broker,
    )
