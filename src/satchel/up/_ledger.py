"""What ``satchel up`` remembers across restarts, in the agent's own database: the
inbound messages it has answered (so a restart never answers one twice) and the
cursors its channels keep (:class:`~satchel.channels.CursorStore`)."""

from __future__ import annotations

from typing import Protocol

__all__ = ["ChannelCursors", "UpLedger"]


class UpLedger(Protocol):
    """The host's restart state: answered messages and channel cursors.

    A message is marked before its reply is sent: a process stopped between the two
    leaves that one message unanswered rather than answered twice.
    """

    async def answered(self, channel: str, message_id: str) -> bool:
        """Whether message ``message_id`` of ``channel`` was marked answered."""
        ...

    async def mark(self, channel: str, message_id: str) -> bool:
        """Mark the message answered; ``False`` when it was already (another process,
        or an earlier run, got there first)."""
        ...

    async def get_cursor(self, key: str) -> str | None:
        """The cursor stored under ``key``, or ``None``."""
        ...

    async def set_cursor(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``, durably."""
        ...

    async def close(self) -> None:
        """Release the database connections (idempotent)."""
        ...


class ChannelCursors:
    """One channel's :class:`~satchel.channels.CursorStore` on an :class:`UpLedger`:
    its keys live under the channel's name, so two channels never share one.

    Example:
        >>> cursors = ChannelCursors(ledger, "discord")
        >>> await cursors.set("last_message", "1100000000000000001")
    """

    def __init__(self, ledger: UpLedger, channel: str) -> None:
        self.ledger = ledger
        self.channel = channel

    async def get(self, key: str) -> str | None:
        """The value stored under ``key`` for this channel, or ``None``."""
        return await self.ledger.get_cursor(f"{self.channel}:{key}")

    async def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key`` for this channel, durably."""
        await self.ledger.set_cursor(f"{self.channel}:{key}", value)
