"""The Discord inbound channel: a bot that reads configured channels and direct messages
from allowed people, and answers there.

**Why REST polling, not the gateway.** The gateway (a websocket with heartbeats,
identify, resume and sharding) would need a second client next to the REST one
:class:`~satchel.channels.DiscordEndpoint` already is, and a fake gateway to test it.
A personal assistant listens in a handful of channels and answers people, not
thousands of events a second, so the channel reads ``GET
/channels/{id}/messages?after=<last>&limit=100`` for each listened channel and each
allowed user's direct-message channel (opened with ``POST /users/@me/channels``), every
``poll_seconds`` (2 s by default), on the same HTTP code, retries and rate limit as
``send_message``. It keeps within Discord's limits: one read per channel per round
(with 5 channels at 2 s that is 2.5 requests a second, against a global 50 a second);
a read answered ``X-RateLimit-Remaining: 0`` waits ``X-RateLimit-Reset-After`` before
that channel is read again; a 429 waits its ``retry_after`` (every channel, for a global
one); 401 and 403 stop the channel at once with an error naming the token or the
permission, so they never pile up towards Discord's invalid-request ban.

What polling cannot do, and the gateway could:

* **Buttons.** A button press is an interaction, which reaches a bot only over the
  gateway or an HTTP interactions endpoint. So :meth:`DiscordChannel.send` writes
  :class:`~satchel.channels.Action` buttons as words to reply with ("Reply to this
  message with **Approve** or **Deny**"), and a reply to that message saying one of them
  arrives with :attr:`~satchel.channels.InboundMessage.action` set, as a press would.
* **Direct messages from anyone.** A bot cannot list its DM channels over REST: only
  the allowed users' DMs are read (strangers' are never seen at all).

**Where it starts.** The cursor of each channel is the last message id handled, kept in
the :class:`~satchel.channels.CursorStore` the host gives (``after:<channel id>``): a
restart resumes right after it. On a first start (no cursor yet) a channel begins at
its newest message: the history before the bot started is never answered.

**Message content.** In a server channel Discord leaves a message's text empty unless
the bot has the *Message Content* privileged intent (Developer Portal, Bot page) or the
message mentions the bot; direct messages always have it. A message with no text is
passed over.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Final, cast

import anyio
import httpx

from satchel._errors import SatchelUsageError, ToolFailed, ToolRetry
from satchel.channels._config import ChannelConfig, DiscordConfig
from satchel.channels._delivery import Delivery, RateLimit
from satchel.channels._discord import DISCORD_API, DiscordEndpoint
from satchel.channels._discord_text import (
    SNOWFLAKE,
    action_for,
    dump_actions,
    fit_content,
    inbound_message,
    load_actions,
    render_actions,
)
from satchel.channels._http import detail_of, json_object, retry_after
from satchel.channels._inbound import (
    Action,
    ChannelUnavailableError,
    CursorStore,
    InboundMessage,
    SentMessage,
)

__all__ = ["DiscordChannel", "MemoryCursorStore", "discord_channel"]

logger = logging.getLogger("satchel.channels.discord")

Sleep = Callable[[float], Awaitable[None]]

_PAGE: Final = 100
"""Messages per read: Discord's most."""
_KEEP_ACTIONS: Final = 200
"""Sent messages with buttons remembered in memory (all are in the cursor store)."""


class MemoryCursorStore:
    """A :class:`~satchel.channels.CursorStore` in memory, for a channel run without a
    host (a restart starts afresh).

    Example:
        >>> channel = DiscordChannel(token, listen={"general": "123"},
        ...                          cursor_store=MemoryCursorStore())
    """

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    async def get(self, key: str) -> str | None:
        """The value stored under ``key``, or ``None``."""
        return self.values.get(key)

    async def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``."""
        self.values[key] = value


class DiscordChannel:
    """A Discord bot as an :class:`~satchel.channels.InboundChannel`: it reads the
    ``listen`` channels and the allowed users' direct messages by REST polling (see the
    module's documentation for why), replies threaded with ``message_reference``, and
    notifies a channel or a user.

    Args:
        token: The bot token.
        listen: The channels to read, name to id.
        allowed_users: The user ids whose messages reach the agent.
        dm: Read the allowed users' direct messages too.
        channels: Further channels :meth:`send` may post in (``send_message``'s),
            name to id.
        notify_channel: Where :meth:`notify` posts (a name from ``listen`` or
            ``channels``, or an id); else ``notify_user``'s direct messages.
        notify_user: The user :meth:`notify` writes to, without ``notify_channel``.
        poll_seconds: Seconds between two reads of each channel.
        base_url: The REST API's base URL (a local server in tests).
        timeout: Seconds to wait for Discord.
        allow_mentions: Let ``@`` mentions in the agent's messages notify people.
        delivery: Retries and rate limit of what the bot posts (default: 3 tries, 5
            messages every 5 seconds).
        cursor_store: Where the read positions are kept across restarts (default: in
            memory).
        clock: Seconds on a monotonic clock (for tests).
        sleep: Waits that many seconds (for tests).

    Example:
        >>> channel = DiscordChannel(token, listen={"general": "1234567890123456789"},
        ...                          allowed_users=["123456789012345678"])
        >>> for message in await channel.fetch():
        ...     if channel.allows(message):
        ...         await channel.reply(message, "Noted.")
        ...     await channel.acknowledge(message)
    """

    def __init__(
        self,
        token: str,
        *,
        listen: Mapping[str, str] | None = None,
        allowed_users: Iterable[str] = (),
        dm: bool = True,
        channels: Mapping[str, str] | None = None,
        notify_channel: str | None = None,
        notify_user: str | None = None,
        poll_seconds: float = 2.0,
        base_url: str = DISCORD_API,
        timeout: float = 10.0,
        allow_mentions: bool = False,
        delivery: Delivery | None = None,
        cursor_store: CursorStore | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = anyio.sleep,
    ) -> None:
        self.listen = dict(listen or {})
        self.allowed_users = frozenset(allowed_users)
        self.dm = dm
        self.channels = {**dict(channels or {}), **self.listen}
        for cid in [*self.channels.values(), *self.allowed_users, notify_user or "0"]:
            if not SNOWFLAKE.match(cid):
                raise SatchelUsageError(f"Discord ids are digits, not {cid[:40]!r}")
        if not self.listen and not (dm and self.allowed_users):
            raise SatchelUsageError(
                "The Discord channel has nothing to read: name channels to listen in, or "
                "allowed users whose direct messages to read."
            )
        self.notify_channel = (
            None if notify_channel is None else self.channels.get(notify_channel, notify_channel)
        )
        if self.notify_channel is not None and not SNOWFLAKE.match(self.notify_channel):
            raise SatchelUsageError(
                f"notify_channel {notify_channel!r} is not one of the channels "
                f"({', '.join(self.channels) or 'none'})"
            )
        self.notify_user = notify_user
        self.poll_seconds = poll_seconds
        self.cursor_store: CursorStore = cursor_store or MemoryCursorStore()
        self.clock = clock
        self.sleep = sleep
        self._client = httpx.AsyncClient(timeout=timeout)
        self.endpoint = DiscordEndpoint(
            token,
            base_url=base_url,
            client=self._client,
            timeout=timeout,
            allow_mentions=allow_mentions,
            delivery=delivery or Delivery(rate=RateLimit(requests=5, per=5.0)),
        )
        self._reads = Delivery(attempts=1, clock=clock, sleep=sleep)
        self._bot_id = ""
        self._started = False
        self._start_lock = anyio.Lock()
        self._cursors: dict[str, str] = {}
        """Channel id to the last message id handled, for every channel read."""
        self._dms: dict[str, str] = {}
        """User id to the bot's direct-message channel with them."""
        self._ready_at: dict[str, float] = {}
        self._next_read = 0.0
        self._actions: dict[str, tuple[Action, ...]] = {}
        self._warned_empty = False

    @property
    def name(self) -> str:
        """``"discord"``."""
        return "discord"

    def __repr__(self) -> str:
        return f"DiscordChannel(listen={sorted(self.listen)!r}, users={len(self.allowed_users)})"

    # --- the wire ---------------------------------------------------------------

    async def _call(
        self,
        method: str,
        path: str,
        doing: str,
        *,
        json_body: Any = None,
        params: Mapping[str, str] | None = None,
        read: bool = False,
    ) -> httpx.Response:
        """One request; a transport failure or a 5xx is
        :class:`ChannelUnavailableError`. Other answers are returned as they are."""
        try:
            response, attempts = await self.endpoint.request(
                method,
                path,
                json=json_body,
                params=params,
                delivery=self._reads if read else None,
            )
        except (ToolFailed, ToolRetry) as exc:
            raise ChannelUnavailableError(
                f"Discord could not be reached to {doing}: {exc.message}",
                details={"service": "Discord"},
            ) from exc
        if response.status_code >= 500:
            raise ChannelUnavailableError(
                f"Discord failed to {doing} ({response.status_code}: {detail_of(response)})"
                + (f" after {attempts} tries" if attempts > 1 else "")
                + ".",
                details={"service": "Discord", "status": response.status_code},
            )
        return response

    def _check(self, response: httpx.Response, doing: str, permission: str) -> None:
        """Raise for an answer that is not a success: 429 is
        :class:`ChannelUnavailableError` (with ``retry_after``), 401, 403 and other 4xx
        are :class:`SatchelUsageError` saying what to fix."""
        status = response.status_code
        if 200 <= status < 300:
            return
        detail = detail_of(response)
        details = {"service": "Discord", "status": status, "detail": detail}
        if status == 429:
            wait = retry_after(response)
            raise ChannelUnavailableError(
                f"Discord is rate-limiting the bot (429: {detail}); it could not {doing}. "
                f"Try again in {wait or self.poll_seconds:.1f} seconds.",
                details={**details, "retry_after": wait},
            )
        if status == 401:
            raise SatchelUsageError(
                f"Discord refused the bot token (401: {detail}) when trying to {doing}. Set "
                "[discord] token (or SATCHEL_DISCORD_TOKEN) to the token on the Bot page of "
                "the application in Discord's Developer Portal.",
                details=details,
            )
        if status == 403:
            raise SatchelUsageError(
                f"Discord does not let the bot {doing} (403: {detail}). Give the bot the "
                f"{permission} permission there (and for direct messages, the person must "
                "share a server with the bot and accept its messages).",
                details=details,
            )
        raise SatchelUsageError(
            f"Discord refused to {doing} ({status}: {detail}).", details=details
        )

    # --- starting ---------------------------------------------------------------

    async def start(self) -> None:
        """Check the token, learn the bot's own id, open the direct-message channels
        and set each channel's cursor (newest message, on a first start). Runs once;
        :meth:`fetch` calls it.

        Raises:
            SatchelUsageError: The token is refused, or the bot may not read a listened
                channel or write to an allowed user (the message says which).
            ChannelUnavailableError: Discord cannot be reached for now.
        """
        if self._started:
            return
        async with self._start_lock:
            if self._started:
                return
            doing = "identify the bot (GET /users/@me)"
            me = await self._call("GET", "/users/@me", doing)
            self._check(me, doing, "bot")
            self._bot_id = str(json_object(me).get("id") or "")
            newest: dict[str, str | None] = {}
            for name, cid in self.listen.items():
                doing = f"read channel {name!r} ({cid})"
                response = await self._call("GET", f"/channels/{cid}", doing)
                self._check(response, doing, "View Channel and Read Message History")
                newest[cid] = _str_or_none(json_object(response).get("last_message_id"))
            users = sorted(self.allowed_users) if self.dm else []
            for user in users:
                cid, last = await self._open_dm(user)
                newest[cid] = last
            for cid, last in newest.items():
                cursor = await self.cursor_store.get(f"after:{cid}")
                if cursor is None or not SNOWFLAKE.match(cursor):
                    cursor = last if last is not None and SNOWFLAKE.match(last) else "0"
                    await self.cursor_store.set(f"after:{cid}", cursor)
                self._cursors[cid] = cursor
            self._started = True
            logger.info(
                "Discord: reading %d channels as bot %s (%d direct)",
                len(self._cursors),
                self._bot_id,
                len(users),
            )

    async def _open_dm(self, user: str) -> tuple[str, str | None]:
        """The bot's direct-message channel with ``user`` and its newest message id."""
        doing = f"open a direct-message channel with user {user}"
        response = await self._call(
            "POST", "/users/@me/channels", doing, json_body={"recipient_id": user}
        )
        self._check(response, doing, "Send Messages")
        body = json_object(response)
        cid = _str_or_none(body.get("id"))
        if cid is None or not SNOWFLAKE.match(cid):
            raise ChannelUnavailableError(f"Discord gave no channel id to {doing}.")
        self._dms[user] = cid
        return cid, _str_or_none(body.get("last_message_id"))

    # --- reading ----------------------------------------------------------------

    async def fetch(self) -> Sequence[InboundMessage]:
        """Wait until the next read is due (at most ``poll_seconds``, or a rate limit's
        wait), read every channel once, and return the new messages oldest first.

        Messages from people not in ``allowed_users`` are returned too (the host
        refuses them; acknowledge them all the same). The bot's own messages, other
        bots', webhooks', system messages and messages with no text are passed over.

        Raises:
            ChannelUnavailableError: Discord cannot be reached, or fails, for now.
            SatchelUsageError: The token or a permission is refused.
        """
        await self.start()
        now = self.clock()
        due = max(
            self._next_read, min((self._ready_at.get(c, 0.0) for c in self._cursors), default=0.0)
        )
        if due > now:
            await self.sleep(due - now)
            now = self.clock()
        self._next_read = now + self.poll_seconds
        found: list[InboundMessage] = []
        for cid in list(self._cursors):
            if self._ready_at.get(cid, 0.0) <= now:
                found.extend(await self._read(cid))
        found.sort(key=lambda message: int(message.message_id))
        return found

    async def _read(self, cid: str) -> list[InboundMessage]:
        """The new messages of one channel; passed-over ones move its cursor when no
        message waits before them."""
        doing = f"read the messages of channel {cid}"
        response = await self._call(
            "GET",
            f"/channels/{cid}/messages",
            doing,
            params={"after": self._cursors[cid], "limit": str(_PAGE)},
            read=True,
        )
        if response.status_code == 429:
            wait = retry_after(response)
            wait = self.poll_seconds if wait is None else wait
            until = self.clock() + wait
            spread = json_object(response).get("global") is True
            for other in self._cursors if spread else [cid]:
                self._ready_at[other] = max(self._ready_at.get(other, 0.0), until)
            logger.warning("Discord: rate-limited reading channel %s; waiting %.2f s", cid, wait)
            return []
        self._check(response, doing, "View Channel and Read Message History")
        self._note_bucket(cid, response)
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, list):
            raise ChannelUnavailableError(f"Discord answered {doing} with no list of messages.")
        raws = [cast(dict[str, Any], m) for m in cast(list[Any], body) if isinstance(m, dict)]
        raws.sort(key=_id_number)
        kept: list[InboundMessage] = []
        passed: str | None = None
        dm = cid in self._dms.values()
        for raw in raws:
            result = inbound_message(raw, channel_id=cid, bot_id=self._bot_id, dm=dm)
            if isinstance(result, InboundMessage):
                kept.append(await self._with_action(result))
            elif result is not None:
                self._warn_if_no_content(raw, dm)
                if not kept:
                    passed = result
        if passed is not None:
            await self._advance(cid, passed)
        return kept

    def _note_bucket(self, cid: str, response: httpx.Response) -> None:
        """Wait out an emptied per-route bucket before reading ``cid`` again."""
        if response.headers.get("x-ratelimit-remaining") != "0":
            return
        try:
            wait = float(response.headers.get("x-ratelimit-reset-after") or "")
        except ValueError:
            return
        if 0 < wait < 3600:
            self._ready_at[cid] = self.clock() + wait

    def _warn_if_no_content(self, raw: dict[str, Any], dm: bool) -> None:
        if dm or self._warned_empty or raw.get("content") != "":
            return
        author = raw.get("author")
        if isinstance(author, dict) and cast(dict[str, Any], author).get("id") == self._bot_id:
            return
        self._warned_empty = True
        logger.warning(
            "Discord: a message came with no text; in server channels the bot needs the "
            "Message Content intent (Developer Portal, Bot page), or people must mention it"
        )

    async def _with_action(self, message: InboundMessage) -> InboundMessage:
        """``message`` with :attr:`~InboundMessage.action` set when it replies to a
        message with buttons by saying one of them."""
        if message.reply_to is None:
            return message
        actions = self._actions.get(message.reply_to)
        if actions is None:
            stored = await self.cursor_store.get(f"actions:{message.reply_to}")
            actions = load_actions(stored) if stored else ()
        data = action_for(message.text, actions)
        if data is None:
            return message
        return InboundMessage(
            channel=message.channel,
            chat=message.chat,
            sender=message.sender,
            text=message.text,
            message_id=message.message_id,
            reply_to=message.reply_to,
            action=data,
            received_at=message.received_at,
            meta=message.meta,
        )

    def allows(self, message: InboundMessage) -> bool:
        """Whether the message's sender is one of ``allowed_users``."""
        return message.channel == self.name and message.sender in self.allowed_users

    async def acknowledge(self, message: InboundMessage) -> None:
        """Move the cursor of the message's channel past it, durably."""
        if message.channel != self.name or message.chat not in self._cursors:
            return
        await self._advance(message.chat, message.message_id)

    async def _advance(self, cid: str, message_id: str) -> None:
        if not SNOWFLAKE.match(message_id) or int(message_id) <= int(self._cursors[cid]):
            return
        self._cursors[cid] = message_id
        await self.cursor_store.set(f"after:{cid}", message_id)

    # --- writing ----------------------------------------------------------------

    async def _post(self, cid: str, payload: dict[str, Any], doing: str) -> SentMessage:
        response = await self._call("POST", f"/channels/{cid}/messages", doing, json_body=payload)
        self._check(response, doing, "Send Messages")
        sent = _str_or_none(json_object(response).get("id")) or ""
        return SentMessage(channel=self.name, chat=cid, message_id=sent)

    async def reply(self, message: InboundMessage, text: str) -> SentMessage:
        """Answer ``message`` in its channel, as a Discord reply to it (no one is
        pinged). A text over 2,000 characters is cut short, saying so.

        Raises:
            ChannelUnavailableError: Discord cannot be reached, fails or rate-limits for
                now.
            SatchelUsageError: The bot may not post there.
        """
        payload = self.endpoint.message_payload(fit_content(text), reply_to=message.message_id)
        return await self._post(message.chat, payload, f"reply in channel {message.chat}")

    async def send(self, chat: str, text: str, *, actions: Sequence[Action] = ()) -> SentMessage:
        """Post ``text`` in ``chat`` (a channel read or configured, or an allowed user's
        direct messages), with ``actions`` written as words to reply with: a reply
        saying one arrives with its :attr:`~InboundMessage.action`.

        Raises:
            SatchelUsageError: ``chat`` is not a channel of this bot, or the bot may not
                post there.
            ChannelUnavailableError: Discord cannot be reached, fails or rate-limits for
                now.
        """
        await self.start()
        cid = self.channels.get(chat, chat)
        known = {*self.channels.values(), *self._cursors, *self._dms.values()}
        if self.notify_channel is not None:
            known.add(self.notify_channel)
        if cid not in known:
            raise SatchelUsageError(
                f"Discord channel {chat[:40]!r} is not one this bot reads or may post in."
            )
        return await self._send(cid, text, actions)

    async def _send(self, cid: str, text: str, actions: Sequence[Action]) -> SentMessage:
        payload = self.endpoint.message_payload(render_actions(text, actions))
        sent = await self._post(cid, payload, f"post in channel {cid}")
        if actions and sent.message_id:
            kept = tuple(actions)
            self._actions[sent.message_id] = kept
            while len(self._actions) > _KEEP_ACTIONS:
                del self._actions[next(iter(self._actions))]
            await self.cursor_store.set(f"actions:{sent.message_id}", dump_actions(kept))
        return sent

    async def notify(self, text: str, *, actions: Sequence[Action] = ()) -> SentMessage | None:
        """Post ``text`` to ``notify_channel``, else to ``notify_user`` by direct
        message; ``None`` when neither is configured.

        Raises:
            ChannelUnavailableError: Discord cannot be reached, fails or rate-limits for
                now.
            SatchelUsageError: The bot may not post there.
        """
        if self.notify_channel is not None:
            await self.start()
            return await self._send(self.notify_channel, text, actions)
        if self.notify_user is None:
            return None
        await self.start()
        cid = self._dms.get(self.notify_user)
        if cid is None:
            cid, _ = await self._open_dm(self.notify_user)
        return await self._send(cid, text, actions)

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.aclose()


def _str_or_none(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) else None


def _id_number(raw: dict[str, Any]) -> int:
    value = _str_or_none(raw.get("id"))
    return int(value) if value is not None and SNOWFLAKE.match(value) else -1


def discord_channel(
    config: ChannelConfig | DiscordConfig, cursor_store: CursorStore | None = None
) -> DiscordChannel:
    """The inbound Discord channel the ``[discord]`` section of a channels file
    configures (``listen``, ``allowed_users``, ``dm``, ``notify_channel``,
    ``notify_user``, ``poll_seconds``; see docs/channels.md).

    Args:
        config: The channels configuration, or its Discord section.
        cursor_store: Where read positions survive restarts (``satchel up`` passes its
            database's); default: memory.

    Raises:
        SatchelUsageError: There is no ``[discord]`` section, or it names nothing to
            read.

    Example:
        >>> channel = discord_channel(load_channels("channels.toml"))
    """
    section = config.discord if isinstance(config, ChannelConfig) else config
    if section is None:
        raise SatchelUsageError("The channels file has no [discord] section.")
    return DiscordChannel(
        section.token.get_secret_value(),
        listen={name: section.channels[name] for name in section.listen},
        allowed_users=section.allowed_users,
        dm=section.dm,
        channels=section.channels,
        notify_channel=section.notify_channel,
        notify_user=section.notify_user,
        poll_seconds=section.poll_seconds,
        base_url=section.base_url,
        timeout=section.delivery.timeout,
        allow_mentions=section.allow_mentions,
        delivery=section.delivery.delivery(),
        cursor_store=cursor_store,
    )
