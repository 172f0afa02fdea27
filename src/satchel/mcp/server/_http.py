"""Streamable HTTP plumbing: the bearer-token gate and the uvicorn runner."""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import math
import os
import socket
from collections.abc import Callable, Mapping

import h11
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from satchel._errors import InvalidInputError
from satchel._throttle import LoginThrottle

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_REQUEST_TIMEOUT",
    "BearerTokenMiddleware",
    "PathMounts",
    "default_max_connections",
    "run_uvicorn",
]

logger = logging.getLogger("satchel.mcp.http")

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""The largest request body served; larger ones get HTTP 413 (the SDK's default)."""

_TOO_MANY = json.dumps(
    {
        "error": "too_many_requests",
        "error_description": "Too many wrong tokens from this address; wait and try again.",
    }
).encode()
_UNAUTHORIZED = json.dumps(
    {
        "error": "invalid_token",
        "error_description": "This server needs 'Authorization: Bearer <token>' with its token.",
    }
).encode()


class BearerTokenMiddleware:
    """ASGI middleware that answers HTTP 401 to any request without the right bearer
    token, before the request's body is read or anything runs, and HTTP 429 to a
    client that sent too many wrong ones (:class:`~satchel._throttle.LoginThrottle`).

    Args:
        app: The app to protect.
        token: The token every request must present as ``Authorization: Bearer <token>``.
        throttle: Counts wrong tokens per client address; share one with the console
            so guesses at either count against one limit.
    """

    def __init__(self, app: ASGIApp, token: str, throttle: LoginThrottle | None = None) -> None:
        if not token:
            raise InvalidInputError("the bearer token must not be empty")
        self.app = app
        self._token = token.encode()
        self.throttle = throttle if throttle is not None else LoginThrottle()

    def _authorized(self, scope: Scope) -> bool:
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                scheme, _, credentials = bytes(value).partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(
                    credentials.strip(), self._token
                )
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        client = _client(scope)
        wait = self.throttle.begin(client)  # recorded before the token is compared
        if wait is None and self._authorized(scope):
            self.throttle.succeeded(client)
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        if wait is not None:
            logger.info("refused an HTTP request from %s: too many wrong tokens", client)
            await _send_json(
                send,
                429,
                _TOO_MANY,
                [(b"retry-after", str(max(1, math.ceil(wait))).encode())],
            )
            return
        logger.info("refused an HTTP request without the right bearer token")
        challenge = b'Bearer realm="satchel", error="invalid_token"'
        await _send_json(send, 401, _UNAUTHORIZED, [(b"www-authenticate", challenge)])


def _client(scope: Scope) -> str:
    """Who is asking, for the throttle: the peer's address."""
    peer = scope.get("client")
    return str(peer[0]) if peer else "unknown"


async def _send_json(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class PathMounts:
    """Serves other apps beside the MCP app, each under its own path prefix (``satchel
    serve --http`` serves the memory console at ``/console``).

    A request under a prefix goes to that app alone, with the prefix added to its
    ``root_path`` (as Starlette's ``Mount`` does), so the MCP app's middleware (the
    bearer token, the request-id guard) never sees it: a mounted app checks its own
    callers. Everything else, the lifespan included, goes to ``app``.

    Args:
        app: The MCP app.
        mounts: ``{prefix: app}``; a prefix starts with ``/`` and does not end with one.
    """

    def __init__(self, app: ASGIApp, mounts: Mapping[str, ASGIApp]) -> None:
        for prefix in mounts:
            if not prefix.startswith("/") or prefix.endswith("/"):
                raise InvalidInputError(f"a mount prefix looks like '/console', not {prefix!r}")
        self.app = app
        self.mounts = dict(mounts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            path = str(scope.get("path", ""))
            for prefix, mounted in self.mounts.items():
                if path == prefix and scope["type"] == "http":
                    await send(
                        {
                            "type": "http.response.start",
                            "status": 307,
                            "headers": [
                                (b"location", (prefix + "/").encode()),
                                (b"content-length", b"0"),
                            ],
                        }
                    )
                    await send({"type": "http.response.body", "body": b""})
                    return
                if path.startswith(prefix + "/"):
                    root = str(scope.get("root_path", ""))
                    await mounted({**scope, "root_path": root + prefix}, receive, send)
                    return
        await self.app(scope, receive, send)


DEFAULT_REQUEST_TIMEOUT = 30.0
"""Seconds a connection may take to send a complete request (head and body) once the
server waits for one; slower or idle connections are closed."""

_FD_RESERVE = 128
"""Open files kept free of client connections: the database, mounts, logs, imports."""

_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 33\r\n\r\nThe request took too long to send."
)
_FULL = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\nretry-after: 1\r\ncontent-length: 31\r\n\r\n"
    b"The server is busy; try again."
)


def default_max_connections() -> int:
    """The connection cap when none is given: the open-file limit less a reserve for
    the server's own files (at least 16), so a flood of sockets cannot exhaust fds."""
    try:
        import resource  # not on Windows

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return 1_000
    if soft == resource.RLIM_INFINITY:
        return 10_000
    return max(16, min(10_000, soft - _FD_RESERVE))


class _Waiting:
    """The connections of one server that are waiting for a request, oldest first."""

    def __init__(self) -> None:
        self.connections: dict[_GuardedH11, None] = {}

    def oldest(self) -> _GuardedH11 | None:
        return next(iter(self.connections), None)


class _GuardedH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol, guarded against idle and slow clients.

    * Nagle's algorithm is off on each connection: sockets accepted by asyncio keep
      ``TCP_NODELAY`` unset, and uvicorn writes a response's head and body separately,
      so every small response waited for the client's delayed ACK (~40 ms per MCP call).
    * A connection must send a complete request within ``request_timeout`` seconds of
      the server starting to wait for one (on connect, and after each response); else
      it gets 408 (when it sent part of a request) and is closed. The deadline is not
      moved by trickled bytes, so a slow-loris client gains nothing. (uvicorn's
      keep-alive timer only runs after a response and is cancelled by any byte.)
    * At most ``max_connections`` connections are open. A new connection over the cap
      closes the oldest one still waiting for a request; when every connection is busy
      with a request, the newcomer gets 503 and is closed.
    """

    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    max_connections: int = 1_000
    waiting: _Waiting = _Waiting()

    _deadline: asyncio.TimerHandle | None = None
    _refused: bool = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # pyright: ignore[reportIncompatibleMethodOverride]
        sock: socket.socket | None = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if len(self.server_state.connections) >= self.max_connections:
            idle = self.waiting.oldest()
            if idle is None:
                logger.warning("refused a connection: %d are open and busy", self.max_connections)
                self._refused = True
                transport.write(_FULL)
                transport.close()
                return
            logger.info("closed the oldest idle connection to make room for a new one")
            idle.close_idle()
        super().connection_made(transport)
        self._wait_for_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        if self._refused:
            return
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._deadline is not None and self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            self._stop_waiting()  # a whole request is in

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._wait_for_request()

    def _wait_for_request(self) -> None:
        self._stop_waiting()
        self.waiting.connections[self] = None
        self._deadline = self.loop.call_later(self.request_timeout, self._timed_out)

    def _stop_waiting(self) -> None:
        self.waiting.connections.pop(self, None)
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _timed_out(self) -> None:
        self._deadline = None
        logger.info("closed a connection that sent no complete request in time")
        self.close_idle()

    def close_idle(self) -> None:
        """Close this connection, which is waiting for (the rest of) a request."""
        self._stop_waiting()
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
            self.transport.write(_TIMED_OUT)  # part of a request head came in
        self.transport.close()


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise InvalidInputError(f"${name} must be a number, got {raw!r}") from None
    if not value > 0:
        raise InvalidInputError(f"${name} must be positive, got {raw!r}")
    return value


def _listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(1024)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


async def run_uvicorn(
    app: ASGIApp,
    host: str,
    port: int,
    *,
    path: str = "/mcp",
    on_ready: Callable[[str], None] | None = None,
    request_timeout: float | None = None,
    max_connections: int | None = None,
) -> None:
    """Serve ``app`` with uvicorn on ``host:port`` (``0``: any free port).

    The socket is bound and listening before ``on_ready`` is called with the endpoint's
    URL, so a client may connect at once. Logs go through :mod:`logging` (stderr under
    the CLI), never to stdout.

    Args:
        app: The ASGI app to serve.
        host: The address to listen on.
        port: The port; ``0`` picks a free one.
        path: The endpoint's path, for the URL given to ``on_ready``.
        on_ready: Called with the endpoint's URL once the socket listens.
        request_timeout: Seconds a connection may take to send a complete request
            before it is closed; by default ``$SATCHEL_HTTP_REQUEST_TIMEOUT`` or
            :data:`DEFAULT_REQUEST_TIMEOUT`.
        max_connections: The most connections open at once; by default
            ``$SATCHEL_HTTP_MAX_CONNECTIONS`` or :func:`default_max_connections`.
    """
    if request_timeout is None:
        request_timeout = _env_number("SATCHEL_HTTP_REQUEST_TIMEOUT", DEFAULT_REQUEST_TIMEOUT)
    if max_connections is None:
        max_connections = int(
            _env_number("SATCHEL_HTTP_MAX_CONNECTIONS", default_max_connections())
        )
    if request_timeout <= 0 or max_connections < 1:
        raise InvalidInputError("request_timeout and max_connections must be positive")
    protocol = type(
        "SatchelH11",
        (_GuardedH11,),
        {
            "request_timeout": request_timeout,
            "max_connections": max_connections,
            "waiting": _Waiting(),
        },
    )
    sock = _listening_socket(host, port)
    bound_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(
        app,
        http=protocol,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    server = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(f"http://{shown}:{bound_port}{path}")
    try:
        await server.serve(sockets=[sock])
    finally:
        sock.close()
