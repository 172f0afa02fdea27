"""``satchel up`` from Python: an agent (or a team) that lives on the person's channels.

* :class:`Host` fetches from every :class:`~satchel.channels.InboundChannel` at once,
  refuses strangers, lets interceptors (consent answers) consume a message, and runs
  one turn per message in its chat's own conversation, with the message's origin; the
  reply goes back where the message came from. With an agenda, reminders and task
  nudges reach the person on every channel.
* :class:`UpLedger` (:func:`open_ledger`: SQLite or PostgreSQL, in the agent's own
  database) remembers the messages answered, so a restart never answers one twice,
  and keeps the channels' cursors (:class:`ChannelCursors`).

Example:
    >>> host = Host(agent=agent, channels=[config.telegram.channel()],
    ...             ledger=open_ledger("satchel.db"), agenda=MemoryAgenda(store))
    >>> await host.run()
"""

import typing

from satchel.up._backoff import Backoff
from satchel.up._host import Host, Interceptor
from satchel.up._ledger import ChannelCursors, UpLedger
from satchel.up._ledger_open import open_ledger
from satchel.up._ledger_sqlite import SQLiteUpLedger
from satchel.up._wiring import INBOUND_SECTIONS, inbound_channels, start_channels

if typing.TYPE_CHECKING:
    from satchel.up._ledger_postgres import PostgresUpLedger

__all__ = [
    "INBOUND_SECTIONS",
    "Backoff",
    "ChannelCursors",
    "Host",
    "Interceptor",
    "PostgresUpLedger",
    "SQLiteUpLedger",
    "UpLedger",
    "inbound_channels",
    "open_ledger",
    "start_channels",
]


def __getattr__(name: str) -> object:
    """``PostgresUpLedger`` on first use: PostgreSQL's driver loads only then."""
    if name == "PostgresUpLedger":
        from satchel.up._ledger_postgres import PostgresUpLedger

        return PostgresUpLedger
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
