"""Slowing down token guessing: after a few wrong tokens from one client, every entry
point that checks the token (``/mcp``'s bearer token, the console's login and bearer
token) refuses that client for a while. ``satchel serve --http`` gives the MCP endpoint
and its ``/console`` one :class:`LoginThrottle`, so guesses count against one limit.

A client is its IP address as the server sees it. Each keeps the times of its recent
attempts; at :data:`MAX_FAILURES` within :data:`WINDOW` seconds it is refused (429,
with ``Retry-After``) until the oldest of them is that old. An attempt is recorded
(:meth:`LoginThrottle.begin`) before the token is compared, with no await in between,
so concurrent guesses cannot all pass the check before any is counted; a right token
clears the client's record. The table is bounded, forgetting the longest-idle clients first, so a
flood of addresses cannot grow it without end. Written by hand: it is a dozen lines of
bookkeeping that no library here does for a Starlette app without a store behind it.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Final

__all__ = ["MAX_FAILURES", "WINDOW", "LoginThrottle"]

MAX_FAILURES: Final = 5
"""Wrong tokens a client may send within :data:`WINDOW` before it is refused."""
WINDOW: Final = 300.0
"""Seconds a failure counts against its client."""
_MAX_CLIENTS: Final = 10_000


class LoginThrottle:
    """Counts wrong tokens per client and says when a client must wait.

    Args:
        max_failures: Failures within ``window`` that lock a client out.
        window: Seconds a failure counts.
        clock: The time source (``time.monotonic``; tests pass their own).
    """

    def __init__(
        self,
        *,
        max_failures: int = MAX_FAILURES,
        window: float = WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_failures = max_failures
        self.window = window
        self._clock = clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, client: str) -> deque[float] | None:
        times = self._failures.get(client)
        if times is None:
            return None
        cutoff = self._clock() - self.window
        while times and times[0] <= cutoff:
            times.popleft()
        if not times:
            del self._failures[client]
            return None
        return times

    def retry_after(self, client: str) -> float | None:
        """Seconds ``client`` must wait before its next try, or ``None`` if it may try."""
        times = self._recent(client)
        if times is None or len(times) < self.max_failures:
            return None
        return max(0.0, times[0] + self.window - self._clock())

    def begin(self, client: str) -> float | None:
        """Start checking a token from ``client``: the seconds it must wait (nothing is
        compared then), or ``None`` after recording the attempt as a failure, which
        :meth:`succeeded` clears if the token is right."""
        wait = self.retry_after(client)
        if wait is None:
            self.failed(client)
        return wait

    def failed(self, client: str) -> None:
        """Note a wrong token from ``client``."""
        times = self._recent(client) or deque[float]()
        times.append(self._clock())
        self._failures[client] = times
        self._failures.move_to_end(client)
        while len(self._failures) > _MAX_CLIENTS:
            self._failures.popitem(last=False)

    def succeeded(self, client: str) -> None:
        """Forget ``client``'s failures (it knew the token)."""
        self._failures.pop(client, None)
