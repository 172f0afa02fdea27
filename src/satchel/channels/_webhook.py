"""Sending to a generic HTTP webhook: the message as one JSON object."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import httpx

from satchel._errors import SatchelUsageError, ToolFailed, ToolRetry
from satchel._redact import strip_userinfo
from satchel.channels._delivery import Delivery
from satchel.channels._http import client_scope, error_for, json_object
from satchel.channels._messaging import OutgoingMessage, Receipt, WebhookTarget

__all__ = ["WebhookEndpoint"]


class WebhookEndpoint:
    """POSTs each message as JSON to the URL its target names::

        {"sender": "ada", "content": "...", "metadata": {...},
         "conversation_id": "default", "sent_at": "2026-11-01T12:00:00+00:00"}

    The URL comes from the model, so only URLs under ``allowed_urls`` are accepted
    (same scheme, host and port, and a path under the allowed one); pass
    ``allow_any=True`` to accept every http(s) URL, which lets the model make this
    process POST to any address it can reach.

    Args:
        allowed_urls: URL prefixes messages may go to, e.g.
            ``["https://hooks.example.com/satchel/"]``.
        allow_any: Accept any http or https URL.
        headers: Extra headers for every request (an ``Authorization`` for the hook).
        client: An ``httpx.AsyncClient`` to reuse; by default one per delivery.
        timeout: Seconds to wait for the hook.
        delivery: Retries and rate limit (by default 3 tries, no rate limit).
    """

    def __init__(
        self,
        *,
        allowed_urls: Sequence[str] = (),
        allow_any: bool = False,
        headers: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: float = 10.0,
        delivery: Delivery | None = None,
    ) -> None:
        self.allowed = tuple(httpx.URL(url) for url in allowed_urls)
        self.allow_any = allow_any
        self._headers = dict(headers or {})
        self.client = client
        self.timeout = timeout
        self.delivery = delivery if delivery is not None else Delivery()

    def __repr__(self) -> str:
        return f"WebhookEndpoint(allowed_urls={[strip_userinfo(str(u)) for u in self.allowed]!r})"

    def permits(self, url: httpx.URL) -> bool:
        """Whether messages may go to ``url``."""
        if url.scheme not in ("http", "https") or not url.host:
            return False
        if self.allow_any:
            return True
        for allowed in self.allowed:
            if (url.scheme, url.host, url.port) != (allowed.scheme, allowed.host, allowed.port):
                continue
            base = allowed.path if allowed.path.endswith("/") else allowed.path + "/"
            if url.path == allowed.path or url.path.startswith(base) or allowed.path == "/":
                return True
        return False

    async def deliver(self, message: OutgoingMessage, /) -> Receipt:
        """POST ``message`` to its target URL.

        Raises:
            ToolRetry: The URL is malformed or not allowed, the hook says the request
                was wrong (4xx), or it is rate-limiting.
            ToolFailed: The hook refuses the credentials, fails (5xx), or cannot be
                reached.
        """
        target = message.target
        if not isinstance(target, WebhookTarget):
            raise SatchelUsageError(f"WebhookEndpoint cannot deliver to {target.type!r}")
        try:
            url = httpx.URL(target.url.strip())
        except httpx.InvalidURL as exc:
            raise ToolRetry(
                f"{target.url[:200]!r} is not a valid URL.", details={"url": target.url[:200]}
            ) from exc
        shown = strip_userinfo(str(url))[:200]
        if not self.permits(url):
            allowed = ", ".join(strip_userinfo(str(u)) for u in self.allowed) or "none"
            raise ToolFailed(
                f"Messages may not be sent to {shown!r}: it is not an allowed "
                f"webhook URL. Allowed: {allowed}.",
                details={"url": shown},
            )
        payload = {
            "sender": message.sender,
            "content": message.content,
            "metadata": dict(message.metadata),
            "conversation_id": message.conversation_id,
            "sent_at": message.sent_at.isoformat(),
        }
        async with client_scope(self.client, self.timeout) as client:
            response, attempts = await self.delivery.request(
                client, "The webhook", "POST", str(url), json=payload, headers=self._headers
            )
        if response.status_code // 100 != 2:
            raise error_for("The webhook", response, address=shown, attempts=attempts)
        message_id = json_object(response).get("id")
        return Receipt(
            to=f"webhook:{strip_userinfo(str(url))}",
            id=str(message_id) if message_id else None,
            channel="webhook",
            attempts=attempts,
        )
