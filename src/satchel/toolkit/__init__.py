"""The productivity toolkit: calendar, tasks and mail on open standards (DESIGN §9).

AgenticPal's tool names, categories, actions and parameter names, on iCalendar
(RFC 5545) for calendar and tasks (local ``.ics`` files by default, any CalDAV server by
URL) and on Maildir/IMAP/SMTP for mail; dates in the words people use, in the user's
zone. :func:`productivity_toolkit` returns them all as one registry;
``satchel serve --toolkit productivity`` serves it.

Example:
    >>> tools = productivity_toolkit(ToolkitConfig.load(timezone="Europe/Paris"))
    >>> await tools.call("add_calendar_event", {"title": "Dentist",
    ...                                         "start_time": "tomorrow at 3pm"})
"""

from satchel.toolkit._agenda import agenda_tools
from satchel.toolkit._agenda_store import MemoryAgenda, Reminder, Step, TrackedTask
from satchel.toolkit._builder import productivity_toolkit
from satchel.toolkit._config import (
    CONFIG_FILE_ENV,
    ToolkitConfig,
    default_config_file,
    default_data_dir,
)
from satchel.toolkit._reminders import deliver_reminders, reminder_agenda

__all__ = [
    "CONFIG_FILE_ENV",
    "MemoryAgenda",
    "Reminder",
    "Step",
    "ToolkitConfig",
    "TrackedTask",
    "agenda_tools",
    "default_config_file",
    "default_data_dir",
    "deliver_reminders",
    "productivity_toolkit",
    "reminder_agenda",
]
