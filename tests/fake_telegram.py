"""A local server that speaks the Telegram Bot API's wire format: ``POST
/bot<token>/<method>`` with form or JSON parameters, answered ``{"ok": true, "result":
...}`` or ``{"ok": false, "error_code", "description", "parameters": {"retry_after"}}``.

A test injects updates (a person's message, a button press), and reads back what the
bot sent. ``getUpdates`` long-polls and confirms updates below ``offset`` as the real
server does, so a restarted client is given what it never confirmed. Failures can be
scripted per method (a 429 with ``retry_after``, a 502). It serves the real client code
paths (python-telegram-bot's ``Bot`` inside :class:`satchel.channels.TelegramChannel`),
in-process or to a ``satchel up`` subprocess by URL.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

TOKEN = "123456:TEST-token_abc"
"""The token the fake accepts."""

BOT_ID = 999000111

_STRINGS = frozenset({"text", "chat_id", "callback_query_id", "parse_mode"})


@dataclass
class Sent:
    """A message the bot sent."""

    chat_id: str
    text: str
    message_id: int
    reply_to: int | None
    buttons: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])


class FakeTelegram:
    """The app and its state; every method is safe to call from the test's thread."""

    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self._lock = threading.Condition()
        self._updates: list[dict[str, Any]] = []
        self._every_update: list[dict[str, Any]] = []
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._next_update = 700_000
        self._next_message: dict[str, int] = {}
        self._failures: dict[str, list[tuple[int, str, int | None]]] = {}
        self.sent: list[Sent] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.answered_queries: list[str] = []
        self.app = Starlette(
            routes=[Route("/bot{token}/{method}", self._call, methods=["GET", "POST"])]
        )

    # -- what a test does --------------------------------------------------------------

    def message(
        self, user: int, text: str, *, chat: int | None = None, reply_to: int | None = None
    ) -> int:
        """A person (``user``) writes ``text`` in ``chat`` (their private chat by
        default); returns the update id."""
        where = chat if chat is not None else user
        with self._lock:
            message: dict[str, Any] = {
                "message_id": self._message_id(str(where)),
                "date": int(time.time()),
                "chat": {"id": where, "type": "private", "first_name": "Sam"},
                "from": {"id": user, "is_bot": False, "first_name": "Sam"},
                "text": text,
            }
            if reply_to is not None:
                message["reply_to_message"] = {
                    "message_id": reply_to,
                    "date": int(time.time()),
                    "chat": message["chat"],
                    "from": {"id": BOT_ID, "is_bot": True, "first_name": "satchel"},
                    "text": "...",
                }
            return self._add({"message": message})

    def press(self, user: int, sent: Sent, data: str) -> int:
        """``user`` presses the button with ``data`` under the bot's message ``sent``."""
        with self._lock:
            shown: dict[str, Any] = {
                "message_id": sent.message_id,
                "date": int(time.time()),
                "chat": {"id": int(sent.chat_id), "type": "private", "first_name": "Sam"},
                "from": {"id": BOT_ID, "is_bot": True, "first_name": "satchel"},
                "text": sent.text,
                "reply_markup": {
                    "inline_keyboard": [
                        [{"text": label, "callback_data": value} for label, value in sent.buttons]
                    ]
                },
            }
            query = {
                "id": f"q{self._next_update}",
                "from": {"id": user, "is_bot": False, "first_name": "Sam"},
                "chat_instance": "1",
                "message": shown,
                "data": data,
            }
            return self._add({"callback_query": query})

    def fail(
        self, method: str, status: int, *, times: int = 1, retry_after: int | None = None
    ) -> None:
        """Answer the next ``times`` calls of ``method`` with an error ``status``."""
        description = {
            401: "Unauthorized",
            429: f"Too Many Requests: retry after {retry_after}",
            502: "Bad Gateway",
        }.get(status, "Internal Server Error")
        with self._lock:
            self._failures.setdefault(method, []).extend(
                [(status, description, retry_after)] * times
            )

    def unconfirm(self) -> None:
        """Forget every ``offset`` confirmation, as if the client had stopped before its
        next poll confirmed what it fetched: a new client is given every update again."""
        with self._lock:
            self._updates = list(self._every_update)

    def pending(self) -> int:
        """Updates not yet confirmed by an ``offset``."""
        with self._lock:
            return len(self._updates)

    def wait_sent(
        self, predicate: Callable[[Sent], bool], *, count: int = 1, timeout: float = 60.0
    ) -> list[Sent]:
        """Block until ``count`` sent messages match ``predicate`` (a hang guard, not a
        timing assertion); returns them."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                found = [s for s in self.sent if predicate(s)]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"{len(found)} of {count} expected messages; sent: {self.sent!r}"
                    )
                self._lock.wait(left)

    def method_calls(self, method: str) -> list[dict[str, Any]]:
        """The parameters of every call of ``method`` so far."""
        with self._lock:
            return [params for name, params in self.calls if name == method]

    # -- the wire ----------------------------------------------------------------------

    def _message_id(self, chat: str) -> int:
        self._next_message[chat] = self._next_message.get(chat, 0) + 1
        return self._next_message[chat]

    def _add(self, body: dict[str, Any]) -> int:
        self._next_update += 1
        update = {"update_id": self._next_update, **body}
        self._updates.append(update)
        self._every_update.append(update)
        self._lock.notify_all()
        for loop, event in self._waiters:  # wake the long polls at once
            loop.call_soon_threadsafe(event.set)
        return self._next_update

    async def _params(self, request: Request) -> dict[str, Any]:
        if request.headers.get("content-type", "").startswith("application/json"):
            body = await request.body()
            return json.loads(body) if body else {}
        form = await request.form()
        params: dict[str, Any] = {}
        for key, value in form.items():
            text = str(value)
            if key in _STRINGS:
                params[key] = text
                continue
            try:
                params[key] = json.loads(text)
            except json.JSONDecodeError:
                params[key] = text
        return params

    async def _call(self, request: Request) -> JSONResponse:
        method = request.path_params["method"]
        params = await self._params(request)
        with self._lock:
            self.calls.append((method, params))
            self._lock.notify_all()
        if request.path_params["token"] != self.token:
            return _error(401, "Unauthorized")
        with self._lock:
            queued = self._failures.get(method)
            failure = queued.pop(0) if queued else None
        if failure is not None:
            status, description, retry_after = failure
            return _error(status, description, retry_after)
        handler = {
            "getMe": self._get_me,
            "getUpdates": self._get_updates,
            "sendMessage": self._send_message,
            "answerCallbackQuery": self._answer_query,
        }.get(method)
        if handler is None:
            return _error(404, "Not Found: method not found")
        return await handler(params)

    async def _get_me(self, params: dict[str, Any]) -> JSONResponse:
        return _ok(
            {
                "id": BOT_ID,
                "is_bot": True,
                "first_name": "satchel",
                "username": "satchel_test_bot",
                "can_join_groups": True,
                "can_read_all_group_messages": False,
                "supports_inline_queries": False,
            }
        )

    async def _get_updates(self, params: dict[str, Any]) -> JSONResponse:
        offset = params.get("offset")
        wait = float(params.get("timeout") or 0)
        allowed = params.get("allowed_updates")
        deadline = anyio.current_time() + wait
        waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiters.append(waiter)
        try:
            while True:
                with self._lock:
                    if offset is not None:
                        self._updates = [u for u in self._updates if u["update_id"] >= int(offset)]
                    ready = [
                        u for u in self._updates if not allowed or any(k in u for k in allowed)
                    ]
                    waiter[1].clear()
                left = deadline - anyio.current_time()
                if ready or left <= 0:
                    return _ok(ready)
                with anyio.move_on_after(left):
                    await waiter[1].wait()
        finally:
            with self._lock:
                self._waiters.remove(waiter)

    async def _send_message(self, params: dict[str, Any]) -> JSONResponse:
        chat = str(params["chat_id"])
        reply = params.get("reply_parameters") or {}
        markup = params.get("reply_markup") or {}
        buttons = [
            (str(b["text"]), str(b.get("callback_data", "")))
            for row in markup.get("inline_keyboard", [])
            for b in row
        ]
        with self._lock:
            sent = Sent(
                chat_id=chat,
                text=str(params["text"]),
                message_id=self._message_id(chat),
                reply_to=reply.get("message_id"),
                buttons=buttons,
            )
            self.sent.append(sent)
            self._lock.notify_all()
        result: dict[str, Any] = {
            "message_id": sent.message_id,
            "date": int(time.time()),
            "chat": {"id": int(chat), "type": "private", "first_name": "Sam"},
            "from": {"id": BOT_ID, "is_bot": True, "first_name": "satchel"},
            "text": sent.text,
        }
        if markup:
            result["reply_markup"] = markup
        return _ok(result)

    async def _answer_query(self, params: dict[str, Any]) -> JSONResponse:
        with self._lock:
            self.answered_queries.append(str(params["callback_query_id"]))
        return _ok(True)


def _ok(result: Any) -> JSONResponse:
    return JSONResponse({"ok": True, "result": result})


def _error(status: int, description: str, retry_after: int | None = None) -> JSONResponse:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return JSONResponse(body, status_code=status)


@contextmanager
def serving_telegram(fake: FakeTelegram) -> Iterator[str]:
    """Serve ``fake`` on a free loopback port in a thread; yields its base URL (what
    ``[telegram] base_url`` says)."""
    ready = threading.Event()

    class _Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            ready.set()

    config = uvicorn.Config(fake.app, host="127.0.0.1", port=0, log_level="error")
    server = _Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    if not ready.wait(timeout=30):  # a hang guard
        raise RuntimeError("the fake Telegram server did not start")
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
