"""Answers for JSON-RPC frames the SDK would drop or answer vaguely, on every transport.

* A request whose ``id`` is not a string or an integer (``true``, ``1.5``, an object,
  ``null``) validates as a *notification* in the SDK's models, so it was dropped without
  a word. JSON-RPC 2.0 wants ``-32600`` with ``id: null``; :func:`bad_request_id` spots
  such a frame, and :class:`RequestIdGuard` answers it over HTTP (the stdio transport
  asks :func:`bad_request_id` itself).
* A frame the JSON parser refuses although it is JSON (a lone surrogate escape such as
  ``"\\udc00"``, or nesting past the parser's depth) gets a message naming that, from
  :func:`parse_problem`, not one about the envelope.
* The SDK answers malformed ``params`` with a bare ``-32602 Invalid request
  parameters``; :class:`NamedInvalidParams` says which parameter and what is wrong.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, cast

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "BAD_ID_MESSAGE",
    "NamedInvalidParams",
    "RequestIdGuard",
    "bad_request_id",
    "parse_problem",
]

logger = logging.getLogger("satchel.mcp.envelope")

BAD_ID_MESSAGE = (
    "Invalid Request: 'id' must be a string or an integer (not a boolean, a fraction, "
    "null, an array or an object)."
)
"""The ``-32600`` message for a request whose id is not usable."""

_MAX_FIELDS_SHOWN = 5
_MAX_SCANNED = 4 * 1024 * 1024  # longer bodies pass unscanned; the SDK refuses them

# An "id" member whose value starts like something other than a string or an integer.
_ODD_ID = re.compile(rb'"id"\s*:\s*(?!"|-?\d+\s*[,}])')


def bad_request_id(frame: bytes | dict[str, Any]) -> bool:
    """Whether ``frame`` (raw JSON text or a decoded object) is a request, meaning it
    has a ``method``, whose ``id`` member is present but not a string or an integer."""
    if isinstance(frame, bytes):
        if _ODD_ID.search(frame) is None:  # the cheap test: every usable id passes it
            return False
        try:
            decoded: object = json.loads(frame)
        except (ValueError, RecursionError):
            return False
        if not isinstance(decoded, dict):
            return False
        frame = cast(dict[str, Any], decoded)
    if "method" not in frame or "id" not in frame:
        return False
    raw_id = frame["id"]
    return isinstance(raw_id, bool) or not isinstance(raw_id, str | int)


def parse_problem(jiter_message: str) -> str | None:
    """A sentence about a JSON text the parser refused for a reason other than its
    syntax (given the parser's ``Invalid JSON: ...`` message), or ``None``."""
    if "surrogate" in jiter_message or "hex escape" in jiter_message:
        return (
            "Parse error: a string holds a lone surrogate escape (such as \\ud800); JSON "
            "text must be valid Unicode, so send the character itself or a surrogate pair."
        )
    if "recursion limit" in jiter_message:
        return (
            "Parse error: the frame nests arrays or objects deeper than the parser allows "
            "(about 200 levels); flatten it."
        )
    return None


class RequestIdGuard:
    """ASGI middleware answering a POSTed request with an unusable ``id`` with HTTP 400
    and ``-32600`` (``id: null``), which the SDK would acknowledge and drop.

    The body is read first (the SDK reads it whole anyway) and handed on unchanged;
    only a body that may hold such an id is decoded (a cheap byte scan decides).

    Args:
        app: The app to guard.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") != "POST"
            or _declared(scope) > _MAX_SCANNED
        ):
            # A declared body too long to serve is refused by the SDK from the head alone.
            await self.app(scope, receive, send)
            return
        received: list[Message] = []
        size = 0
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if not message.get("more_body", False) or size > _MAX_SCANNED:
                break
        complete = received[-1]["type"] == "http.request" and not received[-1].get("more_body")
        if complete and bad_request_id(b"".join(m.get("body", b"") for m in received)):
            logger.info("answered a request whose id is not a string or an integer")
            await _reply_bad_id(send)
            return
        await self.app(scope, _replay(received, receive), send)


def _declared(scope: Scope) -> int:
    for key, value in scope.get("headers", ()):
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0
    return 0


def _replay(received: list[Message], receive: Receive) -> Receive:
    pending = list(received)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


async def _reply_bad_id(send: Send) -> None:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": types.INVALID_REQUEST, "message": BAD_ID_MESSAGE},
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class NamedInvalidParams:
    """SDK server middleware: a ``params`` validation failure becomes ``-32602`` whose
    message names each bad parameter (``params.arguments: input should be a valid
    dictionary``) and whose ``data`` lists them as ``{"field", "problem"}``. The
    client's values are not echoed."""

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        try:
            return await call_next(ctx)
        except ValidationError as exc:
            raise _named(exc) from exc
        except MCPError as exc:
            cause = exc.__cause__
            if exc.error.code == types.INVALID_PARAMS and isinstance(cause, ValidationError):
                raise _named(cause) from cause
            raise


def _named(exc: ValidationError) -> MCPError:
    fields: list[dict[str, str]] = []
    for err in exc.errors(include_url=False, include_input=False):
        loc = [str(part) for part in err["loc"]]
        if not loc or loc[0] != "params":
            loc.insert(0, "params")
        problem = err["msg"][:1].lower() + err["msg"][1:]
        fields.append({"field": ".".join(loc), "problem": problem})
    shown = "; ".join(f"{f['field']}: {f['problem']}" for f in fields[:_MAX_FIELDS_SHOWN])
    if len(fields) > _MAX_FIELDS_SHOWN:
        shown += f"; and {len(fields) - _MAX_FIELDS_SHOWN} more"
    return MCPError(
        code=types.INVALID_PARAMS,
        message=f"Invalid request parameters: {shown}",
        data={"errors": fields},
    )
