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

from satchel.toolkit._builder import productivity_toolkit
from satchel.toolkit._config import (
    CONFIG_FILE_ENV,
    ToolkitConfig,
    default_config_file,
    default_data_dir,
)

__all__ = [
    "CONFIG_FILE_ENV",
    "ToolkitConfig",
    "default_config_file",
    "default_data_dir",
    "productivity_toolkit",
]
