"""``satchel serve --toolkit productivity``: the options that choose and configure a
toolkit (:mod:`satchel.toolkit`), kept here so the ``serve`` command only passes them on."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from satchel._errors import SatchelUsageError
from satchel.toolkit import ToolkitConfig

__all__ = [
    "CalendarOption",
    "Toolkit",
    "ToolkitConfigOption",
    "ToolkitOption",
    "ZoneOption",
    "toolkit_config",
]


class Toolkit(StrEnum):
    """The toolkits ``serve`` can add beside the memory tools."""

    PRODUCTIVITY = "productivity"


ToolkitOption = Annotated[
    Toolkit | None,
    typer.Option(
        "--toolkit",
        envvar="SATCHEL_TOOLKIT",
        case_sensitive=False,
        help="Also serve a toolkit: 'productivity' (calendar, tasks, mail, reminders; "
        "see docs/toolkit.md).",
    ),
]
CalendarOption = Annotated[
    str | None,
    typer.Option(
        "--calendar",
        metavar="URL",
        help="With --toolkit: a CalDAV calendar URL (credentials from SATCHEL_CALENDAR_USERNAME "
        "and SATCHEL_CALENDAR_PASSWORD or the config file); default a local calendar in the "
        "data dir.",
        show_default=False,
    ),
]
ZoneOption = Annotated[
    str | None,
    typer.Option(
        "--timezone",
        metavar="ZONE",
        help="With --toolkit: the user's IANA time zone (default: SATCHEL_TIMEZONE, else "
        "the machine's).",
        show_default=False,
    ),
]
ToolkitConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--toolkit-config",
        metavar="FILE",
        help="With --toolkit: the TOML config file (default: SATCHEL_TOOLKIT_CONFIG, else "
        "the user config dir's satchel/toolkit.toml).",
        show_default=False,
    ),
]


def toolkit_config(
    toolkit: Toolkit | None, calendar: str | None, timezone: str | None, file: Path | None
) -> ToolkitConfig | None:
    """The toolkit's configuration from the flags, the environment and the file; ``None``
    without ``--toolkit``.

    Raises:
        typer.BadParameter: A toolkit flag without ``--toolkit``, or a bad configuration.
    """
    if toolkit is None:
        given = [n for n, v in (("--calendar", calendar), ("--timezone", timezone)) if v]
        if file is not None:
            given.append("--toolkit-config")
        if given:
            raise typer.BadParameter("only makes sense with --toolkit.", param_hint=given[0])
        return None
    if calendar is not None and not calendar.startswith(("http://", "https://")):
        raise typer.BadParameter(
            f"{calendar!r} is not an http(s) URL of a CalDAV calendar.", param_hint="'--calendar'"
        )
    try:
        return ToolkitConfig.load(file, calendar_url=calendar, timezone=timezone)
    except SatchelUsageError as exc:
        raise typer.BadParameter(exc.message, param_hint="'--toolkit'") from exc
