"""What the network endpoints share: one HTTP client scope, and the mapping of a
service's error answers (401, 403, 404, 429, 5xx) to tool errors a model can act on.
Sending itself, with retries and a rate limit, is :mod:`satchel.channels._delivery`'s."""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from datetime import UTC
from typing import Any

import httpx

from satchel._errors import ToolFailed, ToolRetry, ToolSignal

__all__ = [
    "client_scope",
    "detail_of",
    "error_for",
    "json_object",
    "retry_after",
]

_DETAIL_CHARS = 300


@asynccontextmanager
async def client_scope(
    client: httpx.AsyncClient | None, seconds: float
) -> AsyncGenerator[httpx.AsyncClient]:
    """The endpoint's own client if it was given one, else a fresh one closed after
    use."""
    if client is not None:
        yield client
        return
    async with httpx.AsyncClient(timeout=seconds) as fresh:
        yield fresh


def json_object(response: httpx.Response) -> dict[str, Any]:
    """The response's JSON body if it is an object, else ``{}``."""
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return body if isinstance(body, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def detail_of(response: httpx.Response) -> str:
    """The service's own explanation: ``message`` (and ``error``) of a JSON body, else
    the start of the text."""
    body = json_object(response)
    parts = [str(body[key]) for key in ("error", "message") if body.get(key)]
    if parts:
        return ": ".join(parts)[:_DETAIL_CHARS]
    text = response.text.strip()
    return text[:_DETAIL_CHARS] or response.reason_phrase


def retry_after(response: httpx.Response) -> float | None:
    """Seconds to wait before trying again, from a 429 answer: ``Retry-After`` (seconds
    or an HTTP date), a JSON ``retry_after`` (Discord), or ``RateLimit-Reset`` (an epoch
    time, as Bluesky sends). ``None`` when the answer does not say, or says something
    non-finite."""
    seconds = _retry_after(response)
    return seconds if seconds is not None and math.isfinite(seconds) else None


def _retry_after(response: httpx.Response) -> float | None:
    """The hint itself, possibly infinite."""
    header = response.headers.get("retry-after")
    if header:
        try:
            return max(0.0, float(header))
        except ValueError:
            pass
        try:
            moment = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError):
            moment = None
        if moment is not None:
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            return max(0.0, moment.timestamp() - time.time())
    seconds = json_object(response).get("retry_after")
    if isinstance(seconds, int | float) and not isinstance(seconds, bool):
        return max(0.0, float(seconds))
    reset = response.headers.get("ratelimit-reset")
    if reset:
        try:
            return max(0.0, float(reset) - time.time())
        except ValueError:
            return None
    return None


def error_for(
    service: str, response: httpx.Response, *, address: str, attempts: int = 1
) -> ToolSignal:
    """The tool error for a service's non-success answer.

    Args:
        service: The service's name, for the message.
        response: Its (last) answer.
        address: What was addressed (a channel, a handle, a URL), for the message.
        attempts: How many tries were made.
    """
    status = response.status_code
    detail = detail_of(response)
    details: dict[str, Any] = {
        "service": service,
        "status": status,
        "detail": detail,
        "attempts": attempts,
    }
    if status == 429:
        wait = retry_after(response)
        details["retry_after"] = wait
        when = f"in {wait:.1f} seconds" if wait is not None else "later"
        return ToolRetry(
            f"{service} is rate-limiting these messages (429: {detail}). The message was "
            f"not sent; try again {when}.",
            details=details,
        )
    if status == 401:
        return ToolFailed(
            f"{service} refused satchel's credentials (401: {detail}). The message was not "
            "sent, and retrying will not help: tell the user the credentials need fixing.",
            details=details,
        )
    if status == 403:
        return ToolFailed(
            f"{service} does not allow posting to {address} (403: {detail}). The message "
            "was not sent.",
            details=details,
        )
    if status == 404:
        return ToolRetry(
            f"{service} found nothing at {address} (404: {detail}). Check the address.",
            details=details,
        )
    if 400 <= status < 500:
        return ToolRetry(f"{service} rejected the message ({status}: {detail}).", details=details)
    tries = f" after {attempts} tries" if attempts > 1 else ""
    return ToolFailed(
        f"{service} failed ({status}: {detail}){tries}. The message was not sent; try again later.",
        details=details,
    )
