"""A real loopback HTTP server that speaks the request and answer shapes of Discord's
bot REST API, a Bluesky PDS's XRPC API and a generic webhook, including their error
answers (401, 404, 429 with retry hints), so the endpoints are tested over real HTTP.

Shapes follow the services' documentation: Discord ``POST
/api/v10/channels/{id}/messages`` with ``Authorization: Bot <token>`` and JSON
``{"content": ...}``, errors as ``{"message", "code"}`` and 429 as ``{"message",
"retry_after", "global"}`` plus ``Retry-After``; XRPC errors as ``{"error",
"message"}``, rate limits with ``RateLimit-*`` headers.

For the inbound Discord channel, :class:`FakeDiscord` is a small Discord: channels a test
registers hold message objects in Discord's JSON shape (``author``, ``timestamp``,
``message_reference``, type 0 or 19), people post into them with
:meth:`FakeDiscord.say`, and the bot reads them with ``GET
/channels/{id}/messages?after=&limit=`` (newest first, as Discord answers, with
``X-RateLimit-*`` headers), learns itself from ``GET /users/@me``, opens direct messages
with ``POST /users/@me/channels {recipient_id}``, and posts (replies with
``message_reference``) into them. Unregistered channels keep the original answers.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import regex

DISCORD_TOKEN = "bot-token-1"
DISCORD_BOT_ID = "1000000000000000001"
DISCORD_GUILD_ID = "500000000000000001"
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


def _discord_user(user_id: str, username: str, *, bot: bool = False) -> dict[str, Any]:
    user: dict[str, Any] = {
        "id": user_id,
        "username": username,
        "global_name": username.title(),
        "discriminator": "0",
        "avatar": None,
        "public_flags": 0,
    }
    if bot:
        user["bot"] = True
    return user


@dataclass
class FakeDiscord:
    """The Discord side of the server: registered channels and their messages, the
    users the bot may open direct messages with, and switches tests flip. Every method
    holds ``lock`` (the server's)."""

    lock: threading.Lock
    channels: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    messages: dict[str, list[dict[str, Any]]] = field(
        default_factory=dict[str, list[dict[str, Any]]]
    )
    users: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    dm_channels: dict[str, str] = field(default_factory=dict[str, str])
    """User id to the id of the bot's direct-message channel with them."""
    forbidden: set[str] = field(default_factory=set[str])
    """Channel ids the bot may not see (403 Missing Access)."""
    fail_next_gets: list[int] = field(default_factory=list[int])
    """Statuses (429 or 5xx) the next Discord GETs get, one each."""
    bucket_empty: dict[str, float] = field(default_factory=dict[str, float])
    """Channel id to the ``X-RateLimit-Reset-After`` its reads answer with
    ``X-RateLimit-Remaining: 0``."""
    next_id: int = 1100000000000000001

    def snowflake(self) -> str:
        """A fresh message or channel id, larger than every earlier one."""
        value = self.next_id
        self.next_id += 1
        return str(value)

    def add_channel(self, channel_id: str, name: str) -> None:
        """Register a guild text channel the bot can read and post in."""
        with self.lock:
            self.channels[channel_id] = {
                "id": channel_id,
                "type": 0,
                "guild_id": DISCORD_GUILD_ID,
                "name": name,
                "position": len(self.channels),
                "permission_overwrites": [],
                "last_message_id": None,
                "nsfw": False,
                "topic": None,
                "rate_limit_per_user": 0,
                "parent_id": None,
            }
            self.messages[channel_id] = []

    def add_user(self, user_id: str, username: str) -> None:
        """Register a person the bot may open a direct-message channel with."""
        with self.lock:
            self.users[user_id] = _discord_user(user_id, username)

    def dm_channel(self, user_id: str) -> str:
        """The id of the bot's direct-message channel with ``user_id`` (opened now if it
        was not)."""
        with self.lock:
            return self._dm_channel(user_id)

    def _dm_channel(self, user_id: str) -> str:
        channel_id = self.dm_channels.get(user_id)
        if channel_id is None:
            channel_id = self.snowflake()
            self.dm_channels[user_id] = channel_id
            self.channels[channel_id] = {
                "id": channel_id,
                "type": 1,
                "last_message_id": None,
                "flags": 0,
                "recipients": [self.users[user_id]],
            }
            self.messages[channel_id] = []
        return channel_id

    def say(
        self,
        channel_id: str,
        author_id: str,
        content: str,
        *,
        reply_to: str | None = None,
        bot: bool = False,
        **extra: Any,
    ) -> dict[str, Any]:
        """Post a message as ``author_id`` (a person, or another bot); return it."""
        with self.lock:
            author = self.users.get(author_id) or _discord_user(author_id, f"user{author_id[-4:]}")
            if bot:
                author = {**author, "bot": True}
            return self._post(channel_id, author, content, reply_to, extra)

    def _post(
        self,
        channel_id: str,
        author: dict[str, Any],
        content: str,
        reply_to: str | None,
        extra: dict[str, Any],
    ) -> dict[str, Any]:
        message_id = self.snowflake()
        message: dict[str, Any] = {
            "id": message_id,
            "type": 19 if reply_to else 0,
            "channel_id": channel_id,
            "author": author,
            "content": content,
            "timestamp": datetime.now(UTC).isoformat(timespec="microseconds"),
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [],
            "embeds": [],
            "pinned": False,
            "flags": 0,
            "components": [],
        }
        if reply_to:
            message["message_reference"] = {
                "type": 0,
                "channel_id": channel_id,
                "message_id": reply_to,
            }
            if self.channels[channel_id].get("guild_id"):
                message["message_reference"]["guild_id"] = DISCORD_GUILD_ID
            referenced = next((m for m in self.messages[channel_id] if m["id"] == reply_to), None)
            message["referenced_message"] = referenced
        message.update(extra)
        self.messages[channel_id].append(message)
        self.channels[channel_id]["last_message_id"] = message_id
        return message

    def sent_by_bot(self, channel_id: str) -> list[dict[str, Any]]:
        """The messages the bot posted in ``channel_id``, oldest first."""
        with self.lock:
            return [
                m for m in self.messages.get(channel_id, []) if m["author"]["id"] == DISCORD_BOT_ID
            ]


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
    discord: FakeDiscord = field(init=False)

    def __post_init__(self) -> None:
        self.arrived = threading.Condition(self.lock)
        self.discord = FakeDiscord(self.lock)

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
            if seen.path.startswith("/api/v10/"):
                self._discord_get(seen)
                return
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
            self._fail(status)
            return True

        def _fail(self, status: int) -> None:
            """Answer a 429 (with Discord's body and ``Retry-After``) or a bare 5xx."""
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

        def do_POST(self) -> None:
            seen = self._record()
            path = seen.path
            if not path.startswith("/xrpc/") and self._transient():
                return
            if path == "/api/v10/users/@me/channels":
                self._discord_open_dm(seen)
            elif path.startswith("/api/v10/channels/") and path.endswith("/messages"):
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

        def _discord_authorized(self, seen: Seen) -> bool:
            if seen.headers.get("authorization") == f"Bot {DISCORD_TOKEN}":
                return True
            self._reply(401, {"message": "401: Unauthorized", "code": 0})
            return False

        def _discord_get(self, seen: Seen) -> None:
            discord = state.discord
            with state.lock:
                failure = discord.fail_next_gets.pop(0) if discord.fail_next_gets else None
            if failure is not None:
                self._fail(failure)
                return
            if not self._discord_authorized(seen):
                return
            parts = seen.path.removeprefix("/api/v10/").split("/")
            if parts == ["users", "@me"]:
                self._reply(200, _discord_user(DISCORD_BOT_ID, "satchel", bot=True))
                return
            if len(parts) not in (2, 3) or parts[0] != "channels":
                self._reply(404, {"message": "404: Not Found", "code": 0})
                return
            channel_id = parts[1]
            with state.lock:
                channel = discord.channels.get(channel_id)
                known = channel is not None and channel_id not in discord.forbidden
                stored = list(discord.messages.get(channel_id, []))
                empty_for = discord.bucket_empty.get(channel_id)
            if channel_id in discord.forbidden:
                self._reply(403, {"message": "Missing Access", "code": 50001})
                return
            if not known or channel is None:
                self._reply(404, {"message": "Unknown Channel", "code": 10003})
                return
            if len(parts) == 2:
                self._reply(200, channel)
                return
            if parts[2] != "messages":
                self._reply(404, {"message": "404: Not Found", "code": 0})
                return
            self._discord_list(seen, stored, empty_for)

        def _discord_list(
            self, seen: Seen, stored: list[dict[str, Any]], empty_for: float | None
        ) -> None:
            """``GET /channels/{id}/messages``: the oldest ``limit`` after ``after`` (or
            the newest ``limit``), newest first."""
            try:
                limit = int((seen.query.get("limit") or ["50"])[0])
                after = int((seen.query.get("after") or ["-1"])[0])
            except ValueError:
                limit, after = 0, -1
            if not 1 <= limit <= 100:
                self._reply(
                    400,
                    {
                        "message": "Invalid Form Body",
                        "code": 50035,
                        "errors": {
                            "limit": {
                                "_errors": [
                                    {
                                        "code": "NUMBER_TYPE_MAX",
                                        "message": "int value should be less than or equal to 100.",
                                    }
                                ]
                            }
                        },
                    },
                )
                return
            if after >= 0:
                chosen = [m for m in stored if int(m["id"]) > after][:limit]
            else:
                chosen = stored[-limit:]
            headers = {
                "X-RateLimit-Limit": "5",
                "X-RateLimit-Remaining": "0" if empty_for is not None else "4",
                "X-RateLimit-Reset": f"{time.time() + (empty_for or 5.0):.3f}",
                "X-RateLimit-Reset-After": f"{empty_for or 5.0:.3f}",
                "X-RateLimit-Bucket": "0f6ed7d5a0a4b6c18d2c7b1f2e8d3a91",
            }
            self._reply(200, list(reversed(chosen)), headers)

        def _discord_open_dm(self, seen: Seen) -> None:
            if not self._discord_authorized(seen):
                return
            body = seen.body if isinstance(seen.body, dict) else {}
            recipient = str(body.get("recipient_id"))
            with state.lock:
                if recipient not in state.discord.users:
                    channel = None
                else:
                    channel = state.discord.channels[state.discord._dm_channel(recipient)]
            if channel is None:
                self._reply(400, {"message": "Invalid Recipient(s)", "code": 50033})
            else:
                self._reply(200, channel)

        def _discord(self, seen: Seen, channel: str) -> None:
            if not self._discord_authorized(seen):
                return
            with state.lock:
                registered = channel in state.discord.channels
            if registered:
                self._discord_post(seen, channel)
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

        def _discord_post(self, seen: Seen, channel: str) -> None:
            """A post into a registered channel: stored, and answered with the message
            object, as Discord does."""
            if channel in state.discord.forbidden:
                self._reply(403, {"message": "Missing Permissions", "code": 50013})
                return
            body = seen.body if isinstance(seen.body, dict) else {}
            content = body.get("content")
            if not isinstance(content, str) or not content.strip():
                self._reply(400, {"message": "Cannot send an empty message", "code": 50006})
                return
            if len(content) > 2000:
                self._reply(
                    400,
                    {
                        "message": "Invalid Form Body",
                        "code": 50035,
                        "errors": {
                            "content": {
                                "_errors": [
                                    {
                                        "code": "BASE_TYPE_MAX_LENGTH",
                                        "message": "Must be 2000 or fewer in length.",
                                    }
                                ]
                            }
                        },
                    },
                )
                return
            reference = body.get("message_reference")
            reply_to = None
            with state.lock:
                if isinstance(reference, dict):
                    reply_to = str(reference.get("message_id"))
                    exists = any(m["id"] == reply_to for m in state.discord.messages[channel])
                    if not exists and reference.get("fail_if_not_exists", True):
                        reply_to = None
                        problem = True
                    else:
                        problem = False
                else:
                    problem = False
                if not problem:
                    bot = _discord_user(DISCORD_BOT_ID, "satchel", bot=True)
                    extra = {"components": body.get("components") or []}
                    message = state.discord._post(channel, bot, content, reply_to, extra)
            if problem:
                self._reply(
                    400,
                    {
                        "message": "Invalid Form Body",
                        "code": 50035,
                        "errors": {
                            "message_reference": {
                                "_errors": [
                                    {
                                        "code": "MESSAGE_REFERENCE_UNKNOWN_MESSAGE",
                                        "message": "Unknown message",
                                    }
                                ]
                            }
                        },
                    },
                )
                return
            self._reply(200, message)

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
