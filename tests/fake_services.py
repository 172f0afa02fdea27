"""A real loopback HTTP server that speaks the request and answer shapes of Discord's
bot REST API, a Bluesky PDS's XRPC API and a generic webhook, including their error
answers (401, 404, 429 with retry hints), so the endpoints are tested over real HTTP.

Shapes follow the services' documentation: Discord ``POST
/api/v10/channels/{id}/messages`` with ``Authorization: Bot <token>`` and JSON
``{"content": ...}``, errors as ``{"message", "code"}`` and 429 as ``{"message",
"retry_after", "global"}`` plus ``Retry-After``; XRPC errors as ``{"error",
"message"}``, rate limits with ``RateLimit-*`` headers.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import regex

DISCORD_TOKEN = "bot-token-1"
BSKY_IDENTIFIER = "satchel.bsky.social"
BSKY_PASSWORD = "app-pass-1234"
BSKY_DID = "did:plc:satchelbot"
KNOWN_HANDLES = {"alice.bsky.social": "did:plc:alice", "bob.example.com": "did:plc:bob"}


@dataclass
class Seen:
    """One request the server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class FakeServices:
    """The server's state: what it saw, and switches tests flip."""

    base_url: str = ""
    requests: list[Seen] = field(default_factory=list[Seen])
    sessions_created: int = 0
    access_token: str = "access-1"
    expire_next_post: bool = False
    rate_limit_posts: bool = False
    fail_next_posts: list[int] = field(default_factory=list[int])
    """Statuses (429 or 5xx) the next Discord and webhook posts get, one each, before
    they are served normally."""
    fail_next_records: list[int] = field(default_factory=list[int])
    """Statuses (5xx) the next Bluesky ``createRecord`` calls get, as XRPC errors."""
    retry_after: str = "0.25"
    """The ``Retry-After`` of those 429 answers."""
    posts: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    lock: threading.Lock = field(default_factory=threading.Lock)
    arrived: threading.Condition = field(init=False)

    def __post_init__(self) -> None:
        self.arrived = threading.Condition(self.lock)

    def paths(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.requests]

    def wait_for(self, count: int, path: str, timeout: float) -> list[Seen]:
        """Block (in a worker thread) until ``count`` requests to ``path`` arrived;
        return them. Raises ``TimeoutError`` after ``timeout`` seconds."""

        def matching() -> list[Seen]:
            return [r for r in self.requests if r.path == path]

        with self.arrived:
            if not self.arrived.wait_for(lambda: len(matching()) >= count, timeout):
                raise TimeoutError(f"{count} requests to {path} did not arrive: {self.paths()}")
            return matching()


def _handler(state: FakeServices) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            content_type = "text/plain" if isinstance(body, str) else "application/json"
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def _record(self) -> Seen:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except json.JSONDecodeError:
                body = raw.decode("utf-8", "replace")
            seen = Seen(
                self.command,
                parts.path,
                parse_qs(parts.query),
                {k.lower(): v for k, v in self.headers.items()},
                body,
            )
            with state.arrived:
                state.requests.append(seen)
                state.arrived.notify_all()
            return seen

        def do_GET(self) -> None:
            seen = self._record()
            if seen.path == "/xrpc/com.atproto.identity.resolveHandle":
                handle = (seen.query.get("handle") or [""])[0]
                did = KNOWN_HANDLES.get(handle)
                if did is None:
                    self._reply(
                        400, {"error": "InvalidRequest", "message": "Unable to resolve handle"}
                    )
                else:
                    self._reply(200, {"did": did})
                return
            self._reply(404, {"error": "MethodNotImplemented", "message": "not here"})

        def _transient(self) -> bool:
            """Answer with the next queued failure, if any (as Discord does)."""
            with state.lock:
                status = state.fail_next_posts.pop(0) if state.fail_next_posts else None
            if status is None:
                return False
            if status == 429:
                self._reply(
                    429,
                    {
                        "message": "You are being rate limited.",
                        "retry_after": float(state.retry_after),
                        "global": False,
                    },
                    {"Retry-After": state.retry_after, "X-RateLimit-Scope": "user"},
                )
            else:
                self._reply(status, f"{status} Bad Gateway")
            return True

        def do_POST(self) -> None:
            seen = self._record()
            path = seen.path
            if not path.startswith("/xrpc/") and self._transient():
                return
            if path.startswith("/api/v10/channels/") and path.endswith("/messages"):
                self._discord(seen, path.split("/")[4])
            elif path == "/xrpc/com.atproto.server.createSession":
                self._create_session(seen)
            elif path == "/xrpc/com.atproto.repo.createRecord":
                self._create_record(seen)
            elif path.startswith("/hooks/"):
                self._webhook(seen, path.removeprefix("/hooks/"))
            else:
                self._reply(404, {"message": "404: Not Found", "code": 0})

        # --- Discord ---------------------------------------------------------------

        def _discord(self, seen: Seen, channel: str) -> None:
            if seen.headers.get("authorization") != f"Bot {DISCORD_TOKEN}":
                self._reply(401, {"message": "401: Unauthorized", "code": 0})
                return
            if channel == "429":
                self._reply(
                    429,
                    {"message": "You are being rate limited.", "retry_after": 1.5, "global": False},
                    {"Retry-After": "2", "X-RateLimit-Scope": "user"},
                )
                return
            if channel == "404":
                self._reply(404, {"message": "Unknown Channel", "code": 10003})
                return
            body = seen.body if isinstance(seen.body, dict) else {}
            content = body.get("content")
            if not isinstance(content, str) or len(content) > 2000:
                self._reply(
                    400,
                    {"message": "Invalid Form Body", "code": 50035, "errors": {"content": {}}},
                )
                return
            self._reply(
                200, {"id": "1100000000000000001", "channel_id": channel, "content": content}
            )

        # --- Bluesky ---------------------------------------------------------------

        def _create_session(self, seen: Seen) -> None:
            body = seen.body if isinstance(seen.body, dict) else {}
            if (body.get("identifier"), body.get("password")) != (BSKY_IDENTIFIER, BSKY_PASSWORD):
                self._reply(
                    401,
                    {
                        "error": "AuthenticationRequired",
                        "message": "Invalid identifier or password",
                    },
                )
                return
            with state.lock:
                state.sessions_created += 1
                state.access_token = f"access-{state.sessions_created}"
                token = state.access_token
            self._reply(
                200,
                {
                    "accessJwt": token,
                    "refreshJwt": "refresh-x",
                    "handle": BSKY_IDENTIFIER,
                    "did": BSKY_DID,
                    "active": True,
                },
            )

        def _create_record(self, seen: Seen) -> None:
            if seen.headers.get("authorization") != f"Bearer {state.access_token}":
                self._reply(
                    401, {"error": "AuthenticationRequired", "message": "Authentication Required"}
                )
                return
            with state.lock:
                failure = state.fail_next_records.pop(0) if state.fail_next_records else None
            if failure is not None:
                self._reply(
                    failure, {"error": "InternalServerError", "message": "Internal Server Error"}
                )
                return
            if state.expire_next_post:
                state.expire_next_post = False
                self._reply(400, {"error": "ExpiredToken", "message": "Token has expired"})
                return
            if state.rate_limit_posts:
                reset = int(time.time()) + 30
                self._reply(
                    429,
                    {"error": "RateLimitExceeded", "message": "Rate Limit Exceeded"},
                    {
                        "RateLimit-Limit": "5000",
                        "RateLimit-Remaining": "0",
                        "RateLimit-Reset": str(reset),
                        "RateLimit-Policy": "5000;w=3600",
                    },
                )
                return
            body = seen.body if isinstance(seen.body, dict) else {}
            record = body.get("record") or {}
            problem = _post_problem(body, record)
            if problem:
                self._reply(400, {"error": "InvalidRequest", "message": problem})
                return
            with state.lock:
                state.posts.append(record)
                rkey = f"3k{len(state.posts):010d}"
            self._reply(
                200,
                {"uri": f"at://{BSKY_DID}/app.bsky.feed.post/{rkey}", "cid": "bafyreib2rxk3rh6"},
            )

        # --- webhook ---------------------------------------------------------------

        def _webhook(self, seen: Seen, name: str) -> None:
            if name == "limited":
                self._reply(429, "slow down", {"Retry-After": "7"})
            elif name == "private":
                if seen.headers.get("authorization") == "Bearer hook-secret":
                    self._reply(200, {"id": "w-private"})
                else:
                    self._reply(401, {"message": "missing or wrong token"})
            elif name == "broken":
                self._reply(500, "internal error")
            else:
                self._reply(200, {"id": "w-1", "received": True})

    return Handler


def _post_problem(body: dict[str, Any], record: dict[str, Any]) -> str | None:
    """What a PDS would reject in a createRecord of an ``app.bsky.feed.post``."""
    if body.get("repo") != BSKY_DID or body.get("collection") != "app.bsky.feed.post":
        return "Invalid repo or collection"
    if record.get("$type") != "app.bsky.feed.post":
        return "Invalid $type"
    text = record.get("text")
    if not isinstance(text, str) or len(regex.findall(r"\X", text)) > 300:
        return (
            "Invalid app.bsky.feed.post record: Record/text must not be longer than 300 graphemes"
        )
    created = record.get("createdAt")
    if not isinstance(created, str) or not created.endswith("Z"):
        return "Invalid app.bsky.feed.post record: Record/createdAt must be a valid datetime"
    raw = text.encode()
    for facet in record.get("facets") or []:
        index = facet["index"]
        piece = raw[index["byteStart"] : index["byteEnd"]].decode()
        for feature in facet["features"]:
            if feature.get("$type") == "app.bsky.richtext.facet#mention":
                handle = piece.removeprefix("@")
                if KNOWN_HANDLES.get(handle) != feature.get("did"):
                    return f"mention facet {piece!r} does not match {feature.get('did')}"
    return None


@contextmanager
def running_services() -> Iterator[FakeServices]:
    """Start the server on a free loopback port; stop it afterwards."""
    state = FakeServices()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    host, port = server.server_address[:2]
    state.base_url = f"http://{host!s}:{port}"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
