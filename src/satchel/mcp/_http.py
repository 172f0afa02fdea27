"""Streamable HTTP plumbing: the bearer-token gate and the uvicorn runner."""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import socket
from collections.abc import Callable

import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["DEFAULT_MAX_BODY_BYTES", "BearerTokenMiddleware", "run_uvicorn"]

logger = logging.getLogger("satchel.mcp.http")

DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""The largest request body served; larger ones get HTTP 413 (the SDK's default)."""

_UNAUTHORIZED = json.dumps(
    {
        "error": "invalid_token",
        "error_description": "This server needs 'Authorization: Bearer <token>' with its token.",
    }
).encode()


class BearerTokenMiddleware:
    """ASGI middleware that answers HTTP 401 to any request without the right bearer
    token, before the request's body is read or anything runs.

    Args:
        app: The app to protect.
        token: The token every request must present as ``Authorization: Bearer <token>``.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("the bearer token must not be empty")
        self.app = app
        self._token = token.encode()

    def _authorized(self, scope: Scope) -> bool:
        for key, value in scope.get("headers", ()):
            if key == b"authorization":
                scheme, _, credentials = bytes(value).partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(
                    credentials.strip(), self._token
                )
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        logger.info("refused an HTTP request without the right bearer token")
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(_UNAUTHORIZED)).encode()),
                    (b"www-authenticate", b'Bearer realm="satchel", error="invalid_token"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": _UNAUTHORIZED})


class _NoDelayH11(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with Nagle's algorithm off on each connection.

    Sockets accepted by asyncio keep ``TCP_NODELAY`` unset, and uvicorn writes a
    response's head and body separately, so every small response waited for the
    client's delayed ACK: about 40 ms per MCP call on loopback.
    """

    def connection_made(self, transport: asyncio.Transport) -> None:
        sock: socket.socket | None = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)


def _listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
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
) -> None:
    """Serve ``app`` with uvicorn on ``host:port`` (``0``: any free port).

    The socket is bound and listening before ``on_ready`` is called with the endpoint's
    URL, so a client may connect at once. Logs go through :mod:`logging` (stderr under
    the CLI), never to stdout.
    """
    sock = _listening_socket(host, port)
    bound_port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(
        app,
        http=_NoDelayH11,
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
