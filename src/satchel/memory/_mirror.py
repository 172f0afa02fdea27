"""A folder of Markdown files kept in step with one agent's memory, both ways.

:class:`MarkdownMirror` holds the layout of :func:`~satchel.memory.export_markdown`
(``index.md``, ``blocks/``, ``archival/``) in step while it runs:

* **Store to files.** Every ``interval`` seconds, and at once when poked after a write
  (:meth:`MarkdownMirror.poke`), each block whose version changed is written out; a
  deleted block's file is removed. Writes from other processes are seen the same way.
* **Files to store.** Edits to the files are watched (``watchfiles``, a maintained
  library on the OS's change notifications) and read in through the permission gate
  with the same rule as ``satchel memory import``: the ``version`` in the file must be
  the block's version in the store, else it is a *conflict*. A conflict never
  overwrites either side: the edited file stays, the store's text is written beside it
  in ``conflicts/`` (outside the folders that are read), and the conflict is logged and
  reported; merge into the file, set its ``version`` to the store's, and save again. A
  new file becomes a new block; a deleted file deletes nothing (it is written again).

The mirror remembers a digest of the text it last wrote or read for each file, in
``.satchel-mirror.json`` in the folder, so its own writes are not read back, a file
edited by hand is never overwritten by the store's side before it has been read in,
and a file left unedited while the mirror was stopped is simply brought up to date when
it starts again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import cast

import anyio
import anyio.to_thread

from satchel._errors import InvalidInputError
from satchel.memory._markdown import (
    MarkdownReport,
    block_path,
    file_name,
    import_block,
    read_block_file,
    render_block,
    write_index,
)
from satchel.memory._models import Block
from satchel.memory._permissions import RequestOrigin
from satchel.memory._protocol import MemoryStore

__all__ = ["MarkdownMirror"]

logger = logging.getLogger("satchel.memory.mirror")

_READ_FOLDERS = ("blocks", "archival")
_CONFLICTS = "conflicts"
_STATE = ".satchel-mirror.json"


class MarkdownMirror:
    """Keeps ``directory`` and ``agent``'s memory in step (see the module doc).

    Args:
        store: The memory store.
        agent: Whose blocks are mirrored (the blocks it owns).
        directory: The folder; created when missing.
        interval: How often (seconds) to look for store changes made elsewhere.
        on_change: Called after edits to the files changed the store (for example to
            tell MCP clients that memory changed).
        on_report: Called with what each read of edited files did (conflicts and
            refusals among it).

    Example:
        >>> mirror = MarkdownMirror(store, "ada", Path("memory"))  # doctest: +SKIP
        >>> async with anyio.create_task_group() as tg:  # doctest: +SKIP
        ...     tg.start_soon(mirror.run)
    """

    def __init__(
        self,
        store: MemoryStore,
        agent: str,
        directory: Path,
        *,
        interval: float = 1.0,
        on_change: Callable[[], None] | None = None,
        on_report: Callable[[MarkdownReport], None] | None = None,
    ) -> None:
        if not interval > 0:
            raise InvalidInputError(f"interval must be a positive number, not {interval!r}")
        self.store = store
        self.agent = agent
        self.directory = directory
        self.interval = interval
        self._on_change = on_change
        self._on_report = on_report
        self._synced: dict[Path, str] = {}  # path -> digest of the text last in step
        self._versions: dict[str, int] = {}
        self._wake = anyio.Event()
        self._lock = anyio.Lock()
        self._origin = RequestOrigin(channel="mirror")

    def poke(self) -> None:
        """Write store changes out now rather than at the next interval."""
        self._wake.set()

    # -- one pass each way ------------------------------------------------------

    async def write_out(self) -> list[str]:
        """Write every block that changed since the last pass; remove the files of
        deleted blocks. Returns the files written or removed, relative to the folder."""
        async with self._lock:
            blocks = [b for b in await self.store.list_blocks(self.agent) if b.agent == self.agent]
            return await anyio.to_thread.run_sync(self._write_out, blocks)

    def _write_out(self, blocks: list[Block]) -> list[str]:
        done: list[str] = []
        live: set[Path] = set()
        for block in blocks:
            path = block_path(self.directory, block)
            live.add(path)
            if self._versions.get(block.id) == block.version and path in self._synced:
                continue
            if path.is_symlink():  # refused when read in; never written through
                continue
            text = render_block(block)
            on_disk = _read(path)
            if on_disk is not None and on_disk != text and not self._in_step(path, on_disk):
                continue  # edited by hand and not read in yet: the watcher's turn
            if on_disk != text:
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text, encoding="utf-8", newline="")
                except OSError as exc:  # the store stays right; the file waits
                    self._could_not("write", path, exc)
                    continue
                done.append(path.relative_to(self.directory).as_posix())
            self._synced[path] = _digest(text)
            self._versions[block.id] = block.version
        for path in [p for p in self._synced if p not in live]:  # the block is gone
            on_disk = _read(path)
            if on_disk is None or self._in_step(path, on_disk):
                try:
                    path.unlink(missing_ok=True)
                except OSError as exc:
                    self._could_not("remove", path, exc)
                    continue
                done.append(path.relative_to(self.directory).as_posix())
            del self._synced[path]
        try:
            write_index(self.agent, blocks, self.directory)
            if done:
                self._save_state()
        except OSError as exc:
            self._could_not("write", self.directory / "index.md", exc)
        return done

    def _could_not(self, what: str, path: Path, exc: OSError) -> None:
        """Log a file the mirror could not write or remove; it is tried again on the
        next pass, and the store (the truth) is unaffected."""
        logger.warning(
            "mirror of %r: could not %s %s (%s); the memory itself is unaffected",
            self.agent,
            what,
            path,
            exc.strerror or exc,
        )

    def check_folder(self) -> None:
        """Create the folder, and refuse a block folder that is a symbolic link (the
        model's writes would land wherever it points, outside the mirror's folder).

        Raises:
            InvalidInputError: A block folder is a symbolic link.
        """
        self.directory.mkdir(parents=True, exist_ok=True)
        for folder in (*_READ_FOLDERS, _CONFLICTS):
            path = self.directory / folder
            if path.is_symlink():
                raise InvalidInputError(
                    f"the mirror folder's {folder!r} is a symbolic link (to "
                    f"{os.readlink(path)!r}); the mirror writes only inside {self.directory}. "
                    "Replace the link with a real folder, or mirror into another folder."
                )

    def _in_step(self, path: Path, text: str) -> bool:
        return self._synced.get(path) == _digest(text)

    def _load_state(self) -> None:
        raw = _read(self.directory / _STATE)
        try:
            data: object = json.loads(raw) if raw is not None else {}
        except json.JSONDecodeError:
            logger.warning("mirror of %r: %s is unreadable; starting afresh", self.agent, _STATE)
            data = {}
        if isinstance(data, dict):
            for name, digest in cast(dict[object, object], data).items():
                if isinstance(name, str) and isinstance(digest, str) and ".." not in name:
                    self._synced[self.directory / name] = digest

    def _save_state(self) -> None:
        state = {p.relative_to(self.directory).as_posix(): d for p, d in self._synced.items()}
        path = self.directory / _STATE
        path.write_text(json.dumps(state, sort_keys=True, indent=0) + "\n", encoding="utf-8")

    async def read_in(self, paths: Iterable[Path] | None = None) -> MarkdownReport:
        """Read edited files (``paths``, or every block file) into the store through
        the gate; conflicts and refusals are in the report (see the module doc)."""
        report = MarkdownReport()
        async with self._lock:
            chosen = sorted(set(paths)) if paths is not None else list(self._block_files())
            changed = False
            for path in chosen:
                if path.is_symlink():
                    report.refused[path.name] = (
                        "is a symbolic link; the mirror reads and writes only regular "
                        "files inside its folder (copy the file in instead)"
                    )
                    continue
                text = _read(path)
                if text is None or self._in_step(path, text):
                    continue  # deleted, or our own write
                try:
                    block = read_block_file(path, self.agent)
                except InvalidInputError as exc:
                    report.refused[path.name] = exc.message
                    continue
                stored = await import_block(
                    self.store, self.agent, block, report, origin=self._origin
                )
                if stored is not None:
                    changed = True
                    self._synced[path] = _digest(text)  # re-rendered with its new version
                elif block.label in report.unchanged:
                    self._synced[path] = _digest(text)
                elif block.label in report.conflicts:
                    await self._keep_theirs(block.label)
        for label, why in {**report.conflicts, **report.refused, **report.ignored}.items():
            logger.warning("mirror of %r: %s: %s", self.agent, label, why)
        if changed:
            await self.write_out()
            if self._on_change is not None:
                self._on_change()
        if self._on_report is not None and (
            report.written or report.created or report.conflicts or report.refused
        ):
            self._on_report(report)
        return report

    async def _keep_theirs(self, label: str) -> None:
        """Write the store's side of a conflict into ``conflicts/``."""
        current = await self.store.get_block(self.agent, label)
        path = self.directory / _CONFLICTS / file_name(label)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_block(current), encoding="utf-8", newline="")

    def _block_files(self) -> Iterable[Path]:
        for folder in _READ_FOLDERS:
            yield from sorted((self.directory / folder).glob("*.md"))

    # -- running ------------------------------------------------------------------

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Mirror until cancelled: read in what the folder holds that the store lacks
        or that was edited, write the store out, then follow both sides.

        Reports ready (``task_status``) once the first pass is done and the folder is
        watched.
        """
        self.check_folder()
        self._load_state()
        if (self.directory / "index.md").is_file():
            await self.read_in()
        await self.write_out()
        async with anyio.create_task_group() as tg:
            ready = anyio.Event()
            tg.start_soon(self._watch_files, ready)
            await ready.wait()
            task_status.started()
            while True:
                with anyio.move_on_after(self.interval):
                    await self._wake.wait()
                self._wake = anyio.Event()
                await self.write_out()

    async def _watch_files(self, ready: anyio.Event) -> None:
        from watchfiles import awatch  # pyright: ignore[reportUnknownVariableType]

        watched = [self.directory / folder for folder in _READ_FOLDERS]
        for folder in watched:
            folder.mkdir(parents=True, exist_ok=True)
        stop = anyio.Event()
        watcher = awatch(
            *watched,
            stop_event=stop,
            debounce=200,
            step=50,
            yield_on_timeout=True,
            rust_timeout=100,
        )
        try:
            async for changes in watcher:
                ready.set()
                paths = {Path(p) for _, p in changes if p.endswith(".md")}
                if paths:
                    await self.read_in(paths)
        finally:
            stop.set()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        return None
