"""Counts in words for people and models: ``1 reminder``, ``2 reminders``.

One place for it: messages that wrote ``f"{n} reminders"`` said "1 reminders" (issue 27).
"""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, the noun plural unless ``count`` is 1.

    Args:
        count: How many.
        noun: The singular noun.
        plural: The plural when it is not ``noun + "s"`` (``entries``).

    Example:
        >>> counted(1, "reminder"), counted(0, "task"), counted(2, "entry", "entries")
        ('1 reminder', '0 tasks', '2 entries')
    """
    return f"{count} {noun if count == 1 else (plural or noun + 's')}"
