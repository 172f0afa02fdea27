"""Waiting out a channel outage: exponential backoff with jitter, capped."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

__all__ = ["Backoff"]


@dataclass(kw_only=True)
class Backoff:
    """The waits between failed tries: ``base`` doubled per failure, at most ``cap``
    seconds, each drawn from its upper half (so many processes do not retry in step),
    and never less than a ``retry_after`` the service asked for.

    Example:
        >>> backoff = Backoff(base=1.0, cap=60.0)
        >>> 0.5 <= backoff.next() <= 1.0
        True
    """

    base: float = 1.0
    cap: float = 60.0
    failures: int = 0
    _random: random.Random = field(default_factory=random.Random, repr=False)

    def next(self, retry_after: float = 0.0) -> float:
        """Count one more failure and return the seconds to wait before the next try."""
        self.failures += 1
        ceiling = min(self.cap, self.base * 2 ** min(self.failures - 1, 30))
        return max(retry_after, self._random.uniform(ceiling / 2, ceiling))

    def reset(self) -> None:
        """A try succeeded: the next failure starts over at ``base``."""
        self.failures = 0
