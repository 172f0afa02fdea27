"""Keeping an agent's sources current while ``satchel serve`` runs: a watch on every
source folder (``watchfiles``, already satchel's dependency for mirrors) re-reads what
changed, after one catch-up refresh for what changed while nothing watched."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import anyio

from satchel.memory.sources import IndexReport, SourceIndex

__all__ = ["watch_sources"]

logger = logging.getLogger("satchel.sources")


def _log(report: IndexReport) -> None:
    if report.indexed or report.removed:
        logger.info(
            "sources: %d file(s) indexed, %d removed", len(report.indexed), len(report.removed)
        )
    for skipped in report.skipped:
        logger.debug("sources: skipped %s: %s", skipped.path, skipped.reason)


async def watch_sources(
    index: SourceIndex,
    *,
    debounce_ms: int = 400,
    on_report: Callable[[IndexReport], None] = _log,
    ready: anyio.Event | None = None,
) -> None:
    """Keep ``index`` current until cancelled: refresh once, then index each change
    the file system reports under its sources.

    Args:
        index: The agent's sources.
        debounce_ms: How long changes are gathered before they are indexed.
        on_report: Told what each round indexed (default: logged).
        ready: Set once the catch-up refresh is done and the watch has started.
    """
    from watchfiles import awatch

    on_report(await index.refresh())
    roots = [root for root in await index.roots() if root.exists()]
    folders = [root if root.is_dir() else root.parent for root in roots]
    if not folders:
        if ready is not None:
            ready.set()
        await anyio.sleep_forever()
    # an empty batch each second once the watcher runs: the first one says it is ready
    async for changes in awatch(
        *folders, debounce=debounce_ms, recursive=True, yield_on_timeout=True, rust_timeout=1000
    ):
        if ready is not None and not ready.is_set():
            ready.set()
        if not changes:
            continue
        paths = sorted({Path(path) for _, path in changes})
        try:
            on_report(await index.refresh_paths(paths))
        except Exception:  # the boundary of a background task: log, keep watching
            logger.exception("sources: indexing %d changed file(s) failed", len(paths))
