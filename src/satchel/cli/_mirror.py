"""Markdown mirrors from the command line: ``satchel serve --mirror DIR`` and
``satchel memory mirror DIR`` (see :class:`~satchel.memory.MarkdownMirror`)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

import anyio
import anyio.abc
import typer

from satchel._errors import InvalidInputError
from satchel.cli._common import stderr_console
from satchel.cli._store import open_store
from satchel.memory import MarkdownMirror, MarkdownReport, MemoryStore

__all__ = ["ServeMirrors", "agent_folder", "mirror_folder"]

logger = logging.getLogger("satchel.cli.mirror")


def agent_folder(agent: str) -> str:
    """The sub-folder of one agent's mirror under ``serve --agent auto --mirror DIR``:
    the agent's name with anything but letters, digits, ``.``, ``_`` and ``-`` as ``-``
    (``project:github.com:acme:app`` gives ``project-github.com-acme-app``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", agent).strip("-.") or "agent"


def _report(agent: str) -> Callable[[MarkdownReport], None]:
    def show(report: MarkdownReport) -> None:
        console = stderr_console()
        for label, why in {**report.conflicts, **report.refused}.items():
            console.print(f"satchel: mirror of {agent!r}: [yellow]{label}[/]: {why}")

    return show


class ServeMirrors:
    """The mirrors of a running ``satchel serve --mirror DIR``: one for ``--agent`` in
    DIR itself, or with ``--agent auto`` one per agent in a sub-folder each, started as
    each project is first used.

    Args:
        store: The memory store.
        root: DIR.
        group: Runs the mirrors until the server stops.
        per_project: Whether agents get sub-folders (``--agent auto``).
        on_change: Called when edited files changed memory.
    """

    def __init__(
        self,
        store: MemoryStore,
        root: Path,
        group: anyio.abc.TaskGroup,
        *,
        per_project: bool,
        on_change: Callable[[], None],
    ) -> None:
        self.store = store
        self.root = root
        self.per_project = per_project
        self._group = group
        self._on_change = on_change
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
        mirror = MarkdownMirror(
            self.store, agent, folder, on_change=self._on_change, on_report=_report(agent)
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


def mirror_folder(db: str | None, agent: str, folder: Path) -> None:
    """``satchel memory mirror DIR``: keep ``folder`` in step with ``agent``'s memory
    until interrupted."""

    async def work() -> None:
        store = await open_store(db, create=True)
        try:
            await store.ensure_agent(agent)
            mirror = MarkdownMirror(store, agent, folder, on_report=_report(agent))
            mirror.check_folder()
            async with anyio.create_task_group() as tg:
                await tg.start(mirror.run)
                stderr_console().print(
                    f"satchel: mirroring the memory of {agent!r} in {folder} (Ctrl-C to stop)."
                )
        finally:
            await store.close()

    try:
        anyio.run(work)
    except KeyboardInterrupt:
        raise typer.Exit(0) from None
