"""How a network endpoint delivers: a bounded retry on 429 and 5xx answers that honours
the service's ``Retry-After``, and a per-endpoint rate limit.

Why retries are bounded. A tool call is a model waiting: a service that asks for a
minute's pause is not waited out, the model is told when to try again instead
(:class:`~satchel.ToolRetry` with ``retry_after``). Only a transport failure where no
request left (a refused connection) is retried besides 429 and 5xx; a timeout is not,
because the message may have arrived.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

from satchel._errors import SatchelUsageError, ToolFailed, ToolRetry
from satchel.channels._http import retry_after

__all__ = ["Delivery", "RateLimit"]

logger = logging.getLogger("satchel.builtin.delivery")

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True, kw_only=True, slots=True)
class RateLimit:
    """At most ``requests`` requests every ``per`` seconds.

    Example:
        >>> RateLimit(requests=5, per=5.0)  # Discord's usual per-channel pace
    """

    requests: int
    per: float

    def __post_init__(self) -> None:
        if self.requests < 1 or not self.per > 0:
            raise SatchelUsageError(
                f"a rate limit needs requests >= 1 and per > 0, not {self.requests}/{self.per}"
            )


@dataclass(kw_only=True, eq=False)
class Delivery:
    """One endpoint's retry policy and rate limit (share one instance per endpoint).

    Args:
        attempts: Tries per request in all (1: never retry).
        backoff: Seconds before the first retry when the service gives no
            ``Retry-After``; doubled for each later retry.
        max_wait: The longest single wait, in seconds: a ``Retry-After`` (or a local
            rate-limit wait) longer than this is not waited out, the caller is told to
            try again later.
        rate: The endpoint's own rate limit; ``None`` for none.
        clock: Seconds on a monotonic clock (for tests).
        sleep: Waits that many seconds (for tests).

    Example:
        >>> DiscordEndpoint(token, delivery=Delivery(attempts=4, rate=RateLimit(requests=5, per=5)))
    """

    attempts: int = 3
    backoff: float = 0.5
    max_wait: float = 10.0
    rate: RateLimit | None = None
    clock: Callable[[], float] = time.monotonic
    sleep: Sleep = anyio.sleep
    _sent: deque[float] = field(default_factory=deque[float], init=False, repr=False)
    _lock: anyio.Lock = field(default_factory=anyio.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise SatchelUsageError(f"attempts must be at least 1, not {self.attempts}")
        if self.backoff < 0 or self.max_wait < 0:
            raise SatchelUsageError("backoff and max_wait must not be negative")

    async def _take_slot(self, service: str) -> None:
        """Wait for room under :attr:`rate` (at most :attr:`max_wait`), then count one
        request."""
        rate = self.rate
        if rate is None:
            return
        async with self._lock:
            while True:
                now = self.clock()
                while self._sent and now - self._sent[0] >= rate.per:
                    self._sent.popleft()
                if len(self._sent) < rate.requests:
                    self._sent.append(now)
                    return
                wait = rate.per - (now - self._sent[0])
                if wait > self.max_wait:
                    raise ToolRetry(
                        f"satchel sends at most {rate.requests} messages every {rate.per:g} "
                        f"seconds to {service}; the message was not sent. Try again in "
                        f"{wait:.1f} seconds.",
                        details={"service": service, "retry_after": wait, "local": True},
                    )
                logger.debug("%s: waiting %.2f s for the rate limit", service, wait)
                await self.sleep(wait)

    async def request(
        self, client: httpx.AsyncClient, service: str, method: str, url: str, **options: Any
    ) -> tuple[httpx.Response, int]:
        """Send a request under the rate limit, retrying 429 and 5xx answers and refused
        connections; return the last answer and how many tries it took.

        Raises:
            ToolRetry: The service did not answer in time, or the rate limit would need
                a wait longer than :attr:`max_wait`.
            ToolFailed: The service could not be reached, on every try.
        """
        attempt = 0
        while True:
            attempt += 1
            await self._take_slot(service)
            try:
                response = await client.request(method, url, **options)
            except httpx.TimeoutException as exc:
                raise ToolRetry(
                    f"{service} did not answer in time. Try again in a minute.",
                    details={"service": service, "attempts": attempt},
                ) from exc
            except httpx.HTTPError as exc:
                if isinstance(exc, httpx.ConnectError) and attempt < self.attempts:
                    await self._pause(service, self._backoff(attempt), "could not connect")
                    continue
                raise ToolFailed(
                    f"Could not reach {service} ({type(exc).__name__}). The message was not sent.",
                    details={"service": service, "attempts": attempt},
                ) from exc
            status = response.status_code
            if attempt >= self.attempts or not (status == 429 or status >= 500):
                return response, attempt
            hint = retry_after(response)
            wait = hint if hint is not None else self._backoff(attempt)
            if wait > self.max_wait:
                return response, attempt  # not waited out: the caller says when to retry
            await self._pause(service, wait, f"answered {status}")

    def _backoff(self, attempt: int) -> float:
        return min(self.backoff * 2 ** (attempt - 1), self.max_wait)

    async def _pause(self, service: str, seconds: float, why: str) -> None:
        logger.info("%s %s; trying again in %.2f s", service, why, seconds)
        await self.sleep(seconds)
