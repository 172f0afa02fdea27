"""Posting to Bluesky through a PDS's XRPC API: a public post that mentions the target
account."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC
from typing import Any, cast

import httpx
import regex

from satchel._errors import SatchelUsageError, ToolFailed, ToolRetry
from satchel._redact import strip_userinfo
from satchel.channels._delivery import Delivery
from satchel.channels._http import client_scope, error_for, json_object
from satchel.channels._messaging import BlueskyTarget, OutgoingMessage, Receipt

__all__ = ["BLUESKY_MAX_GRAPHEMES", "BLUESKY_SERVICE", "BlueskyEndpoint", "grapheme_count"]

BLUESKY_SERVICE = "https://bsky.social"
"""The default PDS (personal data server) to log in to."""
BLUESKY_MAX_GRAPHEMES = 300
"""The most graphemes (user-perceived characters) a post's text may have."""

_HANDLE = re.compile(r"^(?=.{3,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]*$")
_graphemes = cast(Callable[[str], list[str]], regex.compile(r"\X").findall)  # pyright: ignore[reportUnknownMemberType]
_EXPIRED = ("ExpiredToken", "InvalidToken")


def grapheme_count(text: str) -> int:
    """How many user-perceived characters ``text`` has (an emoji with modifiers is
    one), as Bluesky counts a post's length."""
    return len(_graphemes(text))


class BlueskyEndpoint:
    """Posts to Bluesky as one account: logs in with ``com.atproto.server.createSession``
    (once; the session is kept and renewed when it expires), resolves the target handle
    with ``com.atproto.identity.resolveHandle``, and creates an ``app.bsky.feed.post``
    record with ``com.atproto.repo.createRecord`` whose text starts with a mention of
    the target (a mention facet, so the account is notified).

    Args:
        identifier: The posting account's handle or DID.
        password: An app password of that account.
        service: The PDS's base URL.
        client: An ``httpx.AsyncClient`` to reuse; by default one per delivery.
        timeout: Seconds to wait for the PDS.
        langs: Languages to tag posts with (e.g. ``["en"]``).
        delivery: Retries and rate limit (by default 3 tries, no rate limit).
    """

    def __init__(
        self,
        identifier: str,
        password: str,
        *,
        service: str = BLUESKY_SERVICE,
        client: httpx.AsyncClient | None = None,
        timeout: float = 10.0,
        langs: Sequence[str] = (),
        delivery: Delivery | None = None,
    ) -> None:
        self.identifier = identifier
        self._password = password
        self.service = service.rstrip("/")
        self.client = client
        self.timeout = timeout
        self.langs = tuple(langs)
        self.delivery = delivery if delivery is not None else Delivery()
        self._session: tuple[str, str] | None = None  # (access token, DID)

    def __repr__(self) -> str:
        return (
            f"BlueskyEndpoint(identifier={self.identifier!r}, "
            f"service={strip_userinfo(self.service)!r})"
        )

    def _xrpc(self, method: str) -> str:
        return f"{self.service}/xrpc/{method}"

    async def deliver(self, message: OutgoingMessage, /) -> Receipt:
        """Post ``message`` as a mention of its target handle.

        Raises:
            ToolRetry: The handle is malformed or unknown, the post would be over 300
                graphemes, or the PDS is rate-limiting.
            ToolFailed: The login is refused, or the PDS cannot be reached.
        """
        target = message.target
        if not isinstance(target, BlueskyTarget):
            raise SatchelUsageError(f"BlueskyEndpoint cannot deliver to {target.type!r}")
        handle = target.handle.strip().removeprefix("@").lower()
        if not _HANDLE.match(handle):
            raise ToolRetry(
                f"{target.handle!r} is not a Bluesky handle; handles look like alice.bsky.social.",
                details={"handle": target.handle},
            )
        mention = f"@{handle}"
        text = f"{mention} {message.content}"
        length = grapheme_count(text)
        if length > BLUESKY_MAX_GRAPHEMES:
            room = BLUESKY_MAX_GRAPHEMES - grapheme_count(mention) - 1
            raise ToolRetry(
                f"The post would have {length} characters with the mention; Bluesky allows "
                f"{BLUESKY_MAX_GRAPHEMES}, so the message can have at most {room}. Shorten it.",
                details={"graphemes": length, "limit": BLUESKY_MAX_GRAPHEMES},
            )
        async with client_scope(self.client, self.timeout) as client:
            did = await self._resolve(client, handle)
            record: dict[str, Any] = {
                "$type": "app.bsky.feed.post",
                "text": text,
                "createdAt": message.sent_at.astimezone(UTC)
                .isoformat(timespec="milliseconds")
                .replace("+00:00", "Z"),
                "facets": [
                    {
                        "index": {"byteStart": 0, "byteEnd": len(mention.encode())},
                        "features": [{"$type": "app.bsky.richtext.facet#mention", "did": did}],
                    }
                ],
            }
            if self.langs:
                record["langs"] = list(self.langs)
            body, attempts = await self._create_record(client, record)
        uri = body.get("uri")
        return Receipt(
            to=f"bluesky:{handle}",
            id=str(uri) if uri else None,
            channel="bluesky",
            attempts=attempts,
        )

    async def _login(self, client: httpx.AsyncClient, *, fresh: bool = False) -> tuple[str, str]:
        if self._session is not None and not fresh:
            return self._session
        response, attempts = await self.delivery.request(
            client,
            "Bluesky",
            "POST",
            self._xrpc("com.atproto.server.createSession"),
            json={"identifier": self.identifier, "password": self._password},
        )
        if response.status_code in (400, 401):
            body = json_object(response)
            if response.status_code == 401 or body.get("error") == "AuthenticationRequired":
                raise ToolFailed(
                    f"Bluesky refused the login of {self.identifier!r} "
                    f"({response.status_code}: {body.get('message') or body.get('error')}). "
                    "The message was not sent, and retrying will not help: tell the user "
                    "the Bluesky credentials need fixing.",
                    details={"service": "Bluesky", "status": response.status_code},
                )
        if response.status_code // 100 != 2:
            raise error_for(
                "Bluesky", response, address=strip_userinfo(self.service), attempts=attempts
            )
        body = json_object(response)
        access, did = body.get("accessJwt"), body.get("did")
        if not isinstance(access, str) or not isinstance(did, str):
            raise ToolFailed("Bluesky answered the login without a session; try again later.")
        self._session = (access, did)
        return self._session

    async def _resolve(self, client: httpx.AsyncClient, handle: str) -> str:
        response, attempts = await self.delivery.request(
            client,
            "Bluesky",
            "GET",
            self._xrpc("com.atproto.identity.resolveHandle"),
            params={"handle": handle},
        )
        if response.status_code == 400:
            raise ToolRetry(
                f"No Bluesky account has the handle {handle!r}. Check the spelling.",
                details={"handle": handle},
            )
        if response.status_code // 100 != 2:
            raise error_for("Bluesky", response, address=f"handle {handle}", attempts=attempts)
        did = json_object(response).get("did")
        if not isinstance(did, str):
            raise ToolFailed(f"Bluesky did not resolve {handle!r} to an account; try later.")
        return did

    async def _create_record(
        self, client: httpx.AsyncClient, record: dict[str, Any]
    ) -> tuple[dict[str, Any], int]:
        response: httpx.Response | None = None
        attempts = 0
        for fresh in (False, True):
            access, did = await self._login(client, fresh=fresh)
            response, tries = await self.delivery.request(
                client,
                "Bluesky",
                "POST",
                self._xrpc("com.atproto.repo.createRecord"),
                json={"repo": did, "collection": "app.bsky.feed.post", "record": record},
                headers={"Authorization": f"Bearer {access}"},
            )
            attempts += tries
            expired = response.status_code in (400, 401) and (
                json_object(response).get("error") in _EXPIRED
            )
            if not expired:
                break
            self._session = None
        assert response is not None
        if response.status_code // 100 != 2:
            raise error_for("Bluesky", response, address="the account's feed", attempts=attempts)
        return json_object(response), attempts
