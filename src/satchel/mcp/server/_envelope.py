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
* A frame that is not a JSON-RPC message at all (``params: []``, ``method: 5``,
  ``jsonrpc: "1.0"``, a batch) gets the same answer on every transport:
  :func:`frame_error` (``-32700`` or ``-32600``, with the frame's id when usable), which
  :class:`RequestIdGuard` sends over HTTP (with status 400) and the stdio transport on
  its stream. The SDK's own HTTP answer was ``-32602`` with ``id: null`` and a raw
  validation dump.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, cast

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "BAD_ID_MESSAGE",
    "NamedInvalidParams",
    "RequestIdGuard",
    "bad_request_id",
    "error_message",
    "frame_error",
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


def error_message(request_id: str | int | None, code: int, message: str) -> SessionMessage:
    """A JSON-RPC error reply, ready for a transport."""
    return SessionMessage(
        types.JSONRPCError(
            jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
        )
    )


def frame_error(line: bytes, error: ValidationError | None = None) -> SessionMessage | None:
    """The JSON-RPC error to answer a frame that is not a valid message (``error``: why
    the SDK's parser refused it), or ``None`` when nothing should be answered (a
    malformed *response* from the peer)."""
    try:
        data: object = json.loads(line)
    except RecursionError:
        data = _DEEP
    except ValueError:
        return error_message(None, types.PARSE_ERROR, "Parse error: the frame is not valid JSON.")
    raw_id = cast(dict[str, object], data).get("id") if isinstance(data, dict) else None
    usable_id = raw_id if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) else None
    problem = _parse_problem(error) if error is not None else None
    if data is _DEEP:
        problem = problem or parse_problem("recursion limit")
    if problem is not None:
        return error_message(usable_id, types.PARSE_ERROR, problem)
    if isinstance(data, list):
        return error_message(
            None,
            types.INVALID_REQUEST,
            "Invalid Request: batches are not supported; send one JSON-RPC message per line.",
        )
    if not isinstance(data, dict):
        return error_message(
            None, types.INVALID_REQUEST, "Invalid Request: a message is a JSON object."
        )
    fields = cast(dict[str, object], data)
    if "method" not in fields and ("result" in fields or "error" in fields):
        logger.warning("dropped a malformed JSON-RPC response from the client")
        return None
    if bad_request_id(cast(dict[str, Any], fields)):
        return error_message(None, types.INVALID_REQUEST, BAD_ID_MESSAGE)
    return error_message(
        usable_id,
        types.INVALID_REQUEST,
        "Invalid Request: not a valid JSON-RPC 2.0 message (check 'jsonrpc', 'id', "
        "'method' and that 'params' is an object).",
    )


_DEEP = object()


def _parse_problem(error: ValidationError) -> str | None:
    for err in error.errors(include_url=False, include_input=False):
        if err["type"] == "json_invalid":
            return parse_problem(err["msg"])
    return None


class RequestIdGuard:
    """ASGI middleware answering a POSTed request with an unusable ``id`` with HTTP 400
    and ``-32600`` (``id: null``), which the SDK would acknowledge and drop, and any
    other frame that is no JSON-RPC message as the stdio transport does
    (:func:`frame_error`).

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
        if complete:
            body = b"".join(m.get("body", b"") for m in received)
            if bad_request_id(body):
                logger.info("answered a request whose id is not a string or an integer")
                await _reply(send, error_message(None, types.INVALID_REQUEST, BAD_ID_MESSAGE))
                return
            try:  # what the SDK would parse next, answered as the stdio transport does
                types.jsonrpc_message_adapter.validate_json(body, by_name=False)
            except ValidationError as exc:
                reply = frame_error(body, exc)
                if reply is not None:
                    await _reply(send, reply)
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


async def _reply(send: Send, reply: SessionMessage) -> None:
    """Answer with HTTP 400 and ``reply``, the JSON-RPC error stdio would send."""
    body = reply.message.model_dump_json(by_alias=True, exclude_unset=True).encode()
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
