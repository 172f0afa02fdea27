"""The Markdown mirrors of a running server (``--mirror DIR``; see
:class:`~satchel.memory.MarkdownMirror`)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

import anyio.abc

from satchel._errors import InvalidInputError
from satchel.memory import MarkdownMirror, MarkdownReport, MemoryStore

__all__ = ["ServeMirrors", "agent_folder", "log_report"]

logger = logging.getLogger("satchel.serve")


def agent_folder(agent: str) -> str:
    """The sub-folder of one agent's mirror under ``serve --agent auto --mirror DIR``:
    the agent's name with anything but letters, digits, ``.``, ``_`` and ``-`` as ``-``
    (``project:github.com:acme:app`` gives ``project-github.com-acme-app``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", agent).strip("-.") or "agent"


def log_report(agent: str, report: MarkdownReport) -> None:
    """Log what a mirror of ``agent`` could not apply, one warning per block."""
    for label, why in {**report.conflicts, **report.refused}.items():
        logger.warning("mirror of %r: %s: %s", agent, label, why)


class ServeMirrors:
    """The mirrors of a running server with a ``mirror`` folder: one for the agent in
    the folder itself, or with ``--agent auto`` one per agent in a sub-folder each,
    started as each project is first used.

    Args:
        store: The memory store.
        root: The folder.
        group: Runs the mirrors until the server stops.
        per_project: Whether agents get sub-folders (``--agent auto``).
        on_change: Called when edited files changed memory.
        on_report: Called with an agent and what its mirror could not apply.
    """

    def __init__(
        self,
        store: MemoryStore,
        root: Path,
        group: anyio.abc.TaskGroup,
        *,
        per_project: bool,
        on_change: Callable[[], None],
        on_report: Callable[[str, MarkdownReport], None] = log_report,
    ) -> None:
        self.store = store
        self.root = root
        self.per_project = per_project
        self._group = group
        self._on_change = on_change
        self._on_report = on_report
        self._mirrors: dict[str, MarkdownMirror] = {}

    async def add(self, agent: str, *, required: bool = True) -> None:
        """Start mirroring ``agent`` (once).

        Raises:
            InvalidInputError: The folder cannot be mirrored (a block folder is a
                symbolic link), and ``required``; otherwise that is logged and the
                server goes on without this mirror.
        """
        if agent in self._mirrors:
            return
        folder = self.root / agent_folder(agent) if self.per_project else self.root
        report = self._on_report

        def on_report(found: MarkdownReport) -> None:
            report(agent, found)

        mirror = MarkdownMirror(
            self.store, agent, folder, on_change=self._on_change, on_report=on_report
        )
        try:
            mirror.check_folder()
        except InvalidInputError as exc:
            if required:
                raise
            logger.warning("not mirroring %r: %s", agent, exc.message)
            return
        self._mirrors[agent] = mirror
        await self._group.start(mirror.run)

    def poke(self) -> None:
        """Write memory changes out now."""
        for mirror in self._mirrors.values():
            mirror.poke()
