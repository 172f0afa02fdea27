"""Sending to a Discord channel through the bot REST API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from satchel._errors import SatchelUsageError, ToolFailed, ToolRetry
from satchel._redact import strip_userinfo
from satchel.channels._delivery import Delivery
from satchel.channels._http import client_scope, error_for, json_object
from satchel.channels._messaging import DiscordTarget, OutgoingMessage, Receipt

__all__ = ["DISCORD_API", "DISCORD_MAX_CHARS", "DiscordEndpoint"]

DISCORD_API = "https://discord.com/api/v10"
"""The Discord REST API's base URL."""
DISCORD_MAX_CHARS = 2000
"""The most characters Discord accepts in a message's ``content``."""


class DiscordEndpoint:
    """Posts messages to Discord channels as a bot: ``POST
    /channels/{channel_id}/messages`` with ``Authorization: Bot <token>``.

    Mentions in the text (``@everyone``, roles, users) are sent as text but ping no
    one unless ``allow_mentions`` is set, so a model cannot mass-ping a server. With
    ``channels``, messages go to those channels only (a target may name one by its
    name or its id).

    Args:
        token: The bot token.
        base_url: The API's base URL (a local server in tests).
        client: An ``httpx.AsyncClient`` to reuse; by default one per delivery.
        timeout: Seconds to wait for Discord.
        allow_mentions: Let mentions in the text notify people.
        channels: The allowed channels, name to id; ``None`` allows every channel the
            bot can post in.
        delivery: Retries and rate limit (by default 3 tries, no rate limit).

    Example:
        >>> router.set_endpoint("discord", DiscordEndpoint(os.environ["DISCORD_TOKEN"]))
    """

    def __init__(
        self,
        token: str,
        *,
        base_url: str = DISCORD_API,
        client: httpx.AsyncClient | None = None,
        timeout: float = 10.0,
        allow_mentions: bool = False,
        channels: Mapping[str, str] | None = None,
        delivery: Delivery | None = None,
    ) -> None:
        self._token = token
        self.base_url = base_url.rstrip("/")
        self.client = client
        self.timeout = timeout
        self.allow_mentions = allow_mentions
        self.channels = None if channels is None else dict(channels)
        self.delivery = delivery if delivery is not None else Delivery()

    def _allowed(self, channel: str) -> str:
        """The channel id to post to, for a target naming ``channel``."""
        if self.channels is None:
            return channel
        if channel in self.channels:
            return self.channels[channel]
        if channel in self.channels.values():
            return channel
        allowed = ", ".join(f"{name} ({cid})" for name, cid in self.channels.items()) or "none"
        raise ToolFailed(
            f"Messages may not be sent to Discord channel {channel!r}: it is not one of the "
            f"configured channels. Configured: {allowed}.",
            details={"channel_id": channel, "allowed": sorted(self.channels.values())},
        )

    def __repr__(self) -> str:
        return f"DiscordEndpoint(base_url={strip_userinfo(self.base_url)!r})"

    def message_payload(self, content: str, *, reply_to: str | None = None) -> dict[str, Any]:
        """The JSON body of a message posting ``content``: mentions ping no one unless
        :attr:`allow_mentions`; with ``reply_to``, a reply to that message id in the same
        channel (posted even if that message is gone)."""
        payload: dict[str, Any] = {"content": content}
        if not self.allow_mentions:
            payload["allowed_mentions"] = {"parse": []}
        if reply_to is not None:
            payload["message_reference"] = {"message_id": reply_to, "fail_if_not_exists": False}
        return payload

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, str] | None = None,
        delivery: Delivery | None = None,
    ) -> tuple[httpx.Response, int]:
        """Call the REST API as the bot (``path`` under :attr:`base_url`), under the
        endpoint's retries and rate limit (or ``delivery``'s); return the last answer
        and how many tries it took, whatever its status.

        Raises:
            ToolRetry: Discord did not answer in time, or the rate limit would need a
                wait longer than the delivery's ``max_wait``.
            ToolFailed: Discord could not be reached.
        """
        options: dict[str, Any] = {"headers": {"Authorization": f"Bot {self._token}"}}
        if json is not None:
            options["json"] = json
        if params is not None:
            options["params"] = dict(params)
        async with client_scope(self.client, self.timeout) as client:
            return await (delivery or self.delivery).request(
                client, "Discord", method, f"{self.base_url}{path}", **options
            )

    async def deliver(self, message: OutgoingMessage, /) -> Receipt:
        """Post ``message`` to its channel.

        Raises:
            ToolRetry: The channel id is not a number, the text is over 2000 characters,
                the channel does not exist, or Discord is rate-limiting.
            ToolFailed: The channel is not an allowed one, the token is refused, the bot
                may not post there, or Discord cannot be reached.
        """
        target = message.target
        if not isinstance(target, DiscordTarget):
            raise SatchelUsageError(f"DiscordEndpoint cannot deliver to {target.type!r}")
        channel = self._allowed(target.channel_id.strip())
        if not channel.isascii() or not channel.isdigit():
            raise ToolRetry(
                f"Discord channel ids are numbers (like 1234567890123456789), not {channel!r}.",
                details={"channel_id": channel},
            )
        if len(message.content) > DISCORD_MAX_CHARS:
            raise ToolRetry(
                f"The message has {len(message.content)} characters; Discord accepts at most "
                f"{DISCORD_MAX_CHARS}. Shorten it, or send it in several messages.",
                details={"chars": len(message.content), "limit": DISCORD_MAX_CHARS},
            )
        response, attempts = await self.request(
            "POST", f"/channels/{channel}/messages", json=self.message_payload(message.content)
        )
        if response.status_code // 100 != 2:
            raise error_for("Discord", response, address=f"channel {channel}", attempts=attempts)
        message_id = json_object(response).get("id")
        return Receipt(
            to=f"discord:{channel}",
            id=str(message_id) if message_id else None,
            channel="discord",
            attempts=attempts,
        )
