"""The console's ASGI app: its routes, the login gate in front of them, the error pages
and the packaged static files (htmx and the style sheet)."""

from __future__ import annotations

import logging
import math
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from satchel._throttle import LoginThrottle
from satchel.consent import PermissionBroker
from satchel.console._approvals import ApprovalPages
from satchel.console._blocks import BlockPages
from satchel.console._context import MAX_FORM_BYTES, Console, field
from satchel.console._errors import error_handlers
from satchel.console._guard import COOKIE, Guard
from satchel.console._operator import operator_store
from satchel.console._render import Renderer
from satchel.console._search import SearchPages
from satchel.console._transfer import TransferPages
from satchel.memory import MemoryStore

__all__ = ["console_app"]

logger = logging.getLogger("satchel.console")

_OPEN_PATHS = ("/login", "/static/")
_LOGIN_BYTES = 16 * 1024


def _client(request: Request) -> str:
    """Who is asking, for the throttle: the peer's address."""
    return request.client.host if request.client is not None else "unknown"


def _too_many(console: Console, request: Request, wait: float) -> Response:
    """The refusal of a client that sent too many wrong tokens."""
    seconds = max(1, math.ceil(wait))
    logger.warning(
        "refused console logins from %s for %d s: too many wrong tokens", _client(request), seconds
    )
    response = console.renderer.error(
        request,
        429,
        "Too many wrong tokens",
        f"Too many wrong tokens from this address: try again in {seconds} seconds.",
    )
    response.headers["retry-after"] = str(seconds)
    return response


class _LoginGate:
    """Lets the operator in (see :class:`~satchel.console._guard.Guard`); sends a
    browser without a session to the login page and refuses anyone else."""

    def __init__(self, app: ASGIApp, console: Console) -> None:
        self.app = app
        self.console = console

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        path = str(scope.get("path", ""))
        root = str(scope.get("root_path", "")).rstrip("/")
        inner = path[len(root) :] if root and path.startswith(root) else path
        guard = self.console.guard
        if request.method == "POST":
            size = request.headers.get("content-length", "")
            limit = _LOGIN_BYTES if inner.startswith("/login") else MAX_FORM_BYTES
            if not size.isdigit() or int(size) > limit:
                status = 411 if not size.isdigit() else 413
                message = (
                    "A write must say its length (Content-Length)."
                    if status == 411
                    else f"The request is larger than {limit} bytes."
                )
                refused = self.console.renderer.error(request, status, "Refused", message)
                await refused(scope, receive, send)
                return
        client = _client(request)
        bearer = guard.token is not None and "authorization" in request.headers
        wait = self.console.throttle.retry_after(client) if bearer else None
        if wait is not None:  # a locked-out client's tokens are not even checked
            await _too_many(self.console, request, wait)(scope, receive, send)
            return
        if inner.startswith(_OPEN_PATHS) or guard.authenticated(request):
            await self.app(scope, receive, send)
            return
        response: Response
        if bearer:
            self.console.throttle.failed(client)
        if guard.token is None:
            logger.info("refused a console request for a host that is not loopback")
            response = self.console.renderer.error(
                request,
                403,
                "Refused",
                "Without a token the console answers only at a loopback address "
                "(127.0.0.1, ::1 or localhost).",
            )
        elif request.method == "GET" and "authorization" not in request.headers:
            target = f"{root}/login?next={quote(inner, safe='/')}"
            response = RedirectResponse(target, status_code=303)
        else:
            response = self.console.renderer.error(
                request,
                401,
                "Login needed",
                "This console needs its token: log in, or send 'Authorization: Bearer <token>'.",
            )
            response.headers["www-authenticate"] = 'Bearer realm="satchel console"'
        await response(scope, receive, send)


class _Session:
    """The login and logout handlers."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def _next(self, request: Request, raw: str) -> str:
        base = self.console.renderer.base(request)
        # only a path of this console, never another site
        target = raw if raw.startswith("/") and not raw.startswith("//") else "/"
        return f"{base}{target}"

    async def login_page(self, request: Request) -> Response:
        """The token form (the console's home when no token is set)."""
        if self.console.guard.token is None:
            return RedirectResponse(self._next(request, "/"), status_code=303)
        context = {"next": request.query_params.get("next", "/"), "failed": False}
        return self.console.renderer.render(request, "login.html", context)

    async def login(self, request: Request) -> Response:
        """Check the token and set the session cookie; a client that sent too many
        wrong tokens waits first (:class:`~satchel._throttle.LoginThrottle`)."""
        client = _client(request)
        wait = self.console.throttle.begin(client)  # counted before the form is read
        if wait is not None:
            return _too_many(self.console, request, wait)
        form = await request.form(max_files=0, max_fields=4)
        nxt = field(form, "next", "/")
        if not self.console.guard.token_matches(field(form, "token")):
            logger.info("refused a console login with a wrong token")
            context = {"next": nxt, "failed": True}
            return self.console.renderer.render(request, "login.html", context, status=401)
        self.console.throttle.succeeded(client)
        response = RedirectResponse(self._next(request, nxt), status_code=303)
        response.set_cookie(
            COOKIE,
            self.console.guard.start_session(),
            max_age=int(self.console.guard.session_seconds),
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path=self.console.renderer.base(request) or "/",
        )
        return response

    async def logout(self, request: Request) -> Response:
        """End the session (its cookie is refused from now on) and forget the cookie."""
        await self.console.form(request)
        self.console.guard.end_session(request)
        base = self.console.renderer.base(request)
        response = RedirectResponse(f"{base}/login", status_code=303)
        response.delete_cookie(COOKIE, path=base or "/")
        return response


def console_app(
    store: MemoryStore,
    broker: PermissionBroker,
    *,
    token: str | None = None,
    agent: str | None = None,
    throttle: LoginThrottle | None = None,
) -> Starlette:
    """The memory console as an ASGI app, on an open memory store and the approval
    broker of the same database. Mount it anywhere (``satchel serve --http`` mounts it
    at ``/console``); it closes neither store.

    Args:
        store: The memory store, a :class:`~satchel.memory.GatedStore`; the console
            writes to it as the operator (see :mod:`satchel.console._operator`).
        broker: The approval broker whose requests the inbox shows and decides.
        token: The operator's token; ``None`` serves loopback clients only, without a
            login.
        agent: The agent ``/`` opens; ``None`` for the list of agents.
        throttle: Counts wrong tokens per client; pass the one the MCP endpoint uses
            (``satchel serve --http``) so every entry point shares one limit.

    Raises:
        SatchelUsageError: ``store`` is not a :class:`~satchel.memory.GatedStore`.

    Example:
        >>> app = console_app(store, PermissionBroker(open_approval_store(db)))  # doctest: +SKIP
        >>> uvicorn.run(app, host="127.0.0.1", port=8765)  # doctest: +SKIP
    """
    guard = Guard(token=token)
    renderer = Renderer(guard)
    console = Console(
        store=operator_store(store),
        broker=broker,
        guard=guard,
        renderer=renderer,
        agent=agent,
        throttle=throttle if throttle is not None else LoginThrottle(),
    )
    blocks, search = BlockPages(console), SearchPages(console)
    approvals, session = ApprovalPages(console), _Session(console)
    transfer = TransferPages(console)
    agent_path = "/agents/{agent}"
    block_path = agent_path + "/blocks/{label}"
    routes: list[Any] = [
        Route("/", blocks.home),
        Route("/login", session.login_page, methods=["GET"]),
        Route("/login", session.login, methods=["POST"]),
        Route("/logout", session.logout, methods=["POST"]),
        Route("/agents", blocks.agents),
        Route(agent_path, blocks.agent),
        Route(agent_path + "/blocks", blocks.create, methods=["POST"]),
        Route(agent_path + "/search", search.search),
        Route(agent_path + "/timeline", search.timeline),
        Route(agent_path + "/export", transfer.export),
        Route(agent_path + "/import", transfer.import_, methods=["POST"]),
        Route(block_path, blocks.block, methods=["GET"]),
        Route(block_path, blocks.edit, methods=["POST"]),
        Route(block_path + "/move", blocks.move, methods=["POST"]),
        Route(block_path + "/delete", blocks.confirm_delete, methods=["GET"]),
        Route(block_path + "/delete", blocks.delete, methods=["POST"]),
        Route("/approvals", approvals.inbox),
        Route("/approvals/lists", approvals.pending),
        Route("/approvals/{request_id}", approvals.decide, methods=["POST"]),
        Mount("/static", StaticFiles(packages=[("satchel.console", "static")]), name="static"),
    ]
    handlers: Any = error_handlers(renderer)
    app = Starlette(routes=routes, exception_handlers=handlers)
    app.add_middleware(_LoginGate, console=console)
    return app
