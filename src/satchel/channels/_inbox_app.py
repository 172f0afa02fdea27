"""The local HTTP inbox's web side: the in-memory mailbox (:class:`Mailbox`) and the
Starlette app over it (:func:`inbox_app`).

Routes (every one needs ``Authorization: Bearer <token>``):

- ``POST /messages``: JSON ``{"text", "chat"?, "sender"?, "id"?}`` or form fields of
  the same names. ``202`` with the message's id; with ``?wait=SECONDS``, ``200`` and the
  reply when it comes in time. Posting an id again is idempotent: the same message, never
  queued twice (``409`` if its text differs).
- ``GET /messages/{id}``: the message's status and, once answered, its reply.
- ``GET /notifications?after=SEQ[&wait=SECONDS]``: what the agent sent on its own
  (reminders, nudges, consent requests) after ``SEQ``, optionally long-polled.

Every refusal is a JSON ``{"error", "message"}``: ``401`` for a missing or wrong token
(``429`` after too many), ``400`` for a body or parameter that does not parse, ``413``
for a body over :data:`MAX_BODY_BYTES`, ``415`` for another content type. Written by hand
on Starlette: a few routes and a token check, which no webhook library here does with
the reply-waiting this needs.
"""

from __future__ import annotations

import hmac
import json
import logging
import math
import secrets
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, cast

import anyio
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from satchel._errors import SatchelError
from satchel._throttle import LoginThrottle
from satchel.channels._inbound import Action, InboundMessage

__all__ = ["MAX_BODY_BYTES", "Mailbox", "Notification", "Posted", "inbox_app"]

logger = logging.getLogger("satchel.channels.inbox")

MAX_BODY_BYTES: Final = 64 * 1024
"""The largest request body the inbox reads; a larger one is ``413``."""
_MAX_KEPT: Final = 10_000
"""Posted messages remembered (for idempotency and ``GET /messages/{id}``)."""
_MAX_QUEUED: Final = 1_000
"""Messages waiting to be fetched before posts are refused with ``503``."""
_MAX_NOTES: Final = 1_000
"""Notifications kept for ``GET /notifications``."""
_ID: Final = r"^[A-Za-z0-9._:@-]{1,128}$"
_NAME: Final = r"^[^\x00-\x1f\x7f]{1,128}$"


class _Body(BaseModel):
    """What a post carries; other fields (a webhook's own) are ignored."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    text: str = Field(min_length=1, max_length=20_000)
    chat: str | None = Field(default=None, pattern=_NAME)
    sender: str | None = Field(default=None, pattern=_NAME)
    id: str | None = Field(default=None, pattern=_ID)


@dataclass(kw_only=True)
class Posted:
    """A message posted to the inbox, and its reply once the agent answered."""

    message: InboundMessage
    reply: str | None = None
    answered: anyio.Event = field(default_factory=anyio.Event)

    def view(self) -> dict[str, Any]:
        """What ``GET /messages/{id}`` shows of it."""
        m = self.message
        return {
            "id": m.message_id,
            "chat": m.chat,
            "sender": m.sender,
            "status": "pending" if self.reply is None else "answered",
            "reply": self.reply,
        }


@dataclass(frozen=True, kw_only=True)
class Notification:
    """One message the agent sent on its own (``notify`` or ``send``)."""

    seq: int
    text: str
    chat: str | None
    actions: tuple[Action, ...]
    sent_at: datetime

    def view(self) -> dict[str, Any]:
        """What ``GET /notifications`` shows of it."""
        return {
            "seq": self.seq,
            "text": self.text,
            "chat": self.chat,
            "actions": [{"label": a.label, "data": a.data} for a in self.actions],
            "sent_at": self.sent_at.isoformat(),
        }


class Mailbox:
    """The inbox's state, in memory: posted messages waiting to be fetched, their
    replies, and the notifications. One event loop uses it (the app's and the
    channel's), so it needs no lock.

    Args:
        allowed_senders: The senders that may post; ``None`` for anyone with the token.
    """

    def __init__(self, allowed_senders: Sequence[str] | None = None) -> None:
        self.allowed_senders = None if allowed_senders is None else frozenset(allowed_senders)
        self.posted: OrderedDict[str, Posted] = OrderedDict()
        self.queue: deque[InboundMessage] = deque()
        self.notes: deque[Notification] = deque(maxlen=_MAX_NOTES)
        self._seq = 0
        self._arrived = anyio.Event()
        self._noted = anyio.Event()

    def allows(self, sender: str) -> bool:
        """Whether ``sender`` may post."""
        return self.allowed_senders is None or sender in self.allowed_senders

    def post(self, message: InboundMessage) -> Posted:
        """Queue ``message`` for the next fetch, or return the one already posted with
        its id (queued once)."""
        known = self.posted.get(message.message_id)
        if known is not None:
            return known
        posted = Posted(message=message)
        self.posted[message.message_id] = posted
        while len(self.posted) > _MAX_KEPT:
            self.posted.popitem(last=False)
        self.queue.append(message)
        self._arrived.set()
        self._arrived = anyio.Event()
        return posted

    @property
    def full(self) -> bool:
        """Whether too many messages wait to be fetched to take another."""
        return len(self.queue) >= _MAX_QUEUED

    async def take(self, wait: float) -> list[InboundMessage]:
        """The queued messages, oldest first, waiting up to ``wait`` seconds for one."""
        if not self.queue:
            arrived = self._arrived
            with anyio.move_on_after(wait):
                await arrived.wait()
        taken = list(self.queue)
        self.queue.clear()
        return taken

    def answer(self, message_id: str, text: str) -> bool:
        """Record the reply to ``message_id``; ``False`` when the inbox no longer knows it."""
        posted = self.posted.get(message_id)
        if posted is None:
            return False
        posted.reply = text if posted.reply is None else f"{posted.reply}\n\n{text}"
        posted.answered.set()
        return True

    def note(self, text: str, chat: str | None, actions: Sequence[Action]) -> Notification:
        """Keep a notification for ``GET /notifications``."""
        self._seq += 1
        note = Notification(
            seq=self._seq, text=text, chat=chat, actions=tuple(actions), sent_at=datetime.now(UTC)
        )
        self.notes.append(note)
        self._noted.set()
        self._noted = anyio.Event()
        return note

    async def notes_after(self, after: int, wait: float) -> list[Notification]:
        """The notifications after ``after``, waiting up to ``wait`` seconds for one."""
        found = [n for n in self.notes if n.seq > after]
        if found or wait <= 0:
            return found
        noted = self._noted
        with anyio.move_on_after(wait):
            await noted.wait()
        return [n for n in self.notes if n.seq > after]


def _error(status: int, error: str, message: str, **headers: str) -> JSONResponse:
    return JSONResponse({"error": error, "message": message}, status_code=status, headers=headers)


class _Refused(SatchelError):
    """A request refused with :attr:`response`: raised by the checks deep in a handler,
    turned into that response at the handler's edge (never leaves this module)."""

    def __init__(self, response: Response) -> None:
        super().__init__("request refused")
        self.response = response


def _seconds(request: Request, name: str, limit: float) -> float:
    raw = request.query_params.get(name)
    if raw is None:
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 <= value <= limit:  # also refuses nan
        raise _Refused(
            _error(400, "invalid_parameter", f"{name} must be seconds from 0 to {limit:g}.")
        )
    return value


async def _read_body(request: Request) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _Refused(_too_large())
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise _Refused(_too_large())
    return bytes(body)


def _too_large() -> JSONResponse:
    return _error(413, "too_large", f"The body is over {MAX_BODY_BYTES} bytes.")


async def _fields(request: Request, body: bytes) -> dict[str, Any]:
    """The post's fields, from JSON or a form."""
    kind = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    if kind == "application/json" or kind.endswith("+json"):
        try:
            data: Any = json.loads(body)
        except (ValueError, RecursionError):
            raise _Refused(_error(400, "invalid_json", "The body is not JSON.")) from None
        if not isinstance(data, dict):
            raise _Refused(_error(400, "invalid_body", "The body must be a JSON object."))
        return cast(dict[str, Any], data)
    if kind in ("application/x-www-form-urlencoded", "multipart/form-data"):

        async def replay() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        try:
            form = await Request(request.scope, replay).form(max_files=0, max_fields=100)
        except HTTPException as exc:
            raise _Refused(_error(400, "invalid_form", str(exc.detail))) from None
        fields: dict[str, Any] = {}
        for key, value in form.multi_items():
            if isinstance(value, UploadFile):
                raise _Refused(_error(400, "invalid_form", "Files are not accepted."))
            fields[key] = value
        return fields
    raise _Refused(
        _error(415, "unsupported_media_type", "Send JSON or form data (text, chat, sender, id).")
    )


def _parse(data: dict[str, Any]) -> _Body:
    try:
        return _Body.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
            for e in exc.errors(include_input=False, include_url=False)
        )
        raise _Refused(_error(400, "invalid_body", problems)) from None


def inbox_app(mailbox: Mailbox, token: str, *, max_wait: float = 120.0) -> Starlette:
    """The inbox's Starlette app over ``mailbox``, for requests bearing ``token``.

    Args:
        mailbox: Where posted messages and notifications are kept.
        token: The bearer token every request must carry.
        max_wait: The longest ``?wait=`` allowed, in seconds.
    """
    secret = token.encode()
    throttle = LoginThrottle()

    def check(request: Request) -> None:
        client = request.client.host if request.client is not None else "unknown"
        wait = throttle.begin(client)  # counted before the comparison
        if wait is not None:
            raise _Refused(
                _error(
                    429,
                    "too_many_requests",
                    "Too many wrong tokens from this address; wait and try again.",
                    **{"retry-after": str(max(1, math.ceil(wait)))},
                )
            )
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), secret):
            throttle.succeeded(client)
            return
        logger.info("refused an inbox request without the right bearer token")
        raise _Refused(
            _error(
                401,
                "invalid_token",
                "This inbox needs 'Authorization: Bearer <token>' with its token.",
                **{"www-authenticate": 'Bearer realm="satchel-inbox"'},
            )
        )

    async def post_message(request: Request) -> Response:
        check(request)
        wait = _seconds(request, "wait", max_wait)
        body = _parse(await _fields(request, await _read_body(request)))
        sender = body.sender or "inbox"
        if not mailbox.allows(sender):
            logger.warning("refused an inbox message from %r: not an allowed sender", sender)
            return _error(403, "sender_not_allowed", f"{sender!r} may not post to this inbox.")
        message_id = body.id or secrets.token_hex(8)
        known = mailbox.posted.get(message_id)
        if known is not None and known.message.text != body.text:
            return _error(409, "id_conflict", f"The id {message_id!r} was posted with other text.")
        if known is None and mailbox.full:
            return _error(503, "busy", "Too many messages wait for the agent; try later.")
        posted = mailbox.post(
            InboundMessage(
                channel="inbox",
                chat=body.chat or sender,
                sender=sender,
                text=body.text,
                message_id=message_id,
            )
        )
        if wait > 0 and posted.reply is None:
            with anyio.move_on_after(wait):
                await posted.answered.wait()
        status = 200 if posted.reply is not None else 202
        return JSONResponse(posted.view(), status_code=status)

    async def get_message(request: Request) -> Response:
        check(request)
        posted = mailbox.posted.get(str(request.path_params["message_id"]))
        if posted is None:
            return _error(404, "not_found", "No message with that id (or it is long gone).")
        return JSONResponse(posted.view())

    async def get_notifications(request: Request) -> Response:
        check(request)
        raw = request.query_params.get("after", "0")
        if not raw.isdigit() or len(raw) > 18:
            return _error(400, "invalid_parameter", "after must be a notification's seq (>= 0).")
        wait = _seconds(request, "wait", max_wait)
        notes = await mailbox.notes_after(int(raw), wait)
        last = notes[-1].seq if notes else int(raw)
        return JSONResponse({"notifications": [n.view() for n in notes], "last": last})

    def guarded(endpoint: Any) -> Any:
        async def run(request: Request) -> Response:
            try:
                return await endpoint(request)
            except _Refused as refused:
                return refused.response

        return run

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return _error(exc.status_code, "http_error", str(exc.detail))

    async def internal(request: Request, exc: Exception) -> Response:
        logger.error("the inbox failed on %s", request.url.path, exc_info=exc)
        return _error(500, "internal", "The inbox failed on this request; see its log.")

    return Starlette(
        routes=[
            Route("/messages", guarded(post_message), methods=["POST"]),
            Route("/messages/{message_id:str}", guarded(get_message), methods=["GET"]),
            Route("/notifications", guarded(get_notifications), methods=["GET"]),
        ],
        exception_handlers={HTTPException: http_error, Exception: internal},
    )
