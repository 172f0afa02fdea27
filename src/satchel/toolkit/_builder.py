"""``productivity_toolkit``: one registry with every toolkit tool that is available."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from satchel.registry import ToolRegistry
from satchel.toolkit._config import ToolkitConfig
from satchel.tools import BaseTool

if TYPE_CHECKING:
    from satchel.memory import MemoryStore

__all__ = ["productivity_toolkit"]

logger = logging.getLogger("satchel.toolkit")

_PARTS = (
    ("satchel.toolkit._calendar_tools", "calendar_tools"),
    ("satchel.toolkit._task_tools", "task_tools"),
    ("satchel.toolkit.mail", "mail_tools"),
    ("satchel.toolkit._agenda", "agenda_tools"),
)


def _part(module: str, attr: str) -> Callable[..., Iterable[BaseTool]] | None:
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module.startswith(exc.name):
            return None  # that part of the toolkit is not in this build
        raise
    return cast("Callable[..., Iterable[BaseTool]] | None", getattr(loaded, attr, None))


def productivity_toolkit(
    config: ToolkitConfig | None = None, *, store: MemoryStore | None = None
) -> ToolRegistry:
    """Every productivity tool: calendar, tasks, mail, and the agent's own reminders and
    tracked tasks.

    Each part is a function ``part(config, **kwargs) -> Iterable[BaseTool]`` in its own
    module, registered when present in this build:

    * ``satchel.toolkit._calendar_tools.calendar_tools(config)``: the calendar tools;
    * ``satchel.toolkit._task_tools.task_tools(config)``: the task tools;
    * ``satchel.toolkit.mail.mail_tools(config)``: the mail tools;
    * ``satchel.toolkit._agenda.agenda_tools(config, store=store)``: ``schedule_reminder``
      and ``track_task`` (in the memory ``store`` when given).

    Args:
        config: Where the data lives and the user's zone; default
            :meth:`ToolkitConfig.load`.
        store: The memory store for the agent's reminders and tracked tasks.

    Example:
        >>> tools = productivity_toolkit(ToolkitConfig.load(timezone="Europe/Paris"))
        >>> "add_calendar_event" in tools
        True
    """
    config = config if config is not None else ToolkitConfig.load()
    registry = ToolRegistry()
    for module, attr in _PARTS:
        build = _part(module, attr)
        if build is None:
            logger.debug("toolkit part %s.%s is not available", module, attr)
            continue
        kwargs: dict[str, Any] = {"store": store} if attr == "agenda_tools" else {}
        for tool in build(config, **kwargs):
            registry.register(tool)
    return registry
