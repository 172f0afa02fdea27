"""The source index of one agent: add folders and files, keep them current, search
them, open and grep the files behind them."""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import logging
import os
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

import anyio
import anyio.to_thread

from satchel._errors import (
    InvalidInputError,
    NotFoundError,
    ToolFailed,
    ToolRetry,
)
from satchel.memory._models import Block, BlockKind, Domain, Permission, SearchHit
from satchel.memory._protocol import MemoryStore
from satchel.memory._search import is_relevant
from satchel.memory.sources._chunks import Chunk, chunk_text
from satchel.memory.sources._files import SKIPPED_DIRS, Skipped, SourceFile, read_text, walk
from satchel.memory.sources._records import (
    ROOTS_LABEL,
    SOURCE_TAG,
    FileRecord,
    chunk_label,
    file_digest,
    file_label,
    sources_agent,
)

__all__ = [
    "FileWindow",
    "GrepHit",
    "GrepResult",
    "IndexReport",
    "SourceHit",
    "SourceIndex",
]

logger = logging.getLogger("satchel.sources")

MAX_WINDOW_LINES: Final = 400
MAX_GREP_HITS: Final = 500
_GREP_SECONDS: Final = 2.0
_LINE_CHARS: Final = 400


@dataclass(frozen=True, slots=True)
class SourceHit:
    """A passage search found: which file, which lines, its text and score."""

    file: str
    start: int
    end: int
    text: str
    score: float
    id: str
    relevant: bool
    """False for the best of unrelated passages (see :func:`satchel.memory.is_relevant`)."""
    hit: SearchHit
    """The memory store's hit behind it (scores, ranks)."""


@dataclass(frozen=True, slots=True)
class GrepHit:
    """A line that matched: its file, its 1-based number and its text."""

    file: str
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class GrepResult:
    """What a grep found, and whether it stopped at its limit."""

    hits: list[GrepHit]
    files_searched: int
    truncated: bool


@dataclass(frozen=True, slots=True)
class FileWindow:
    """Lines ``start`` to ``end`` of a file (1-based, inclusive) out of ``total``."""

    file: str
    start: int
    end: int
    total: int
    lines: list[str]


@dataclass(slots=True)
class IndexReport:
    """What one add or refresh did."""

    indexed: list[str] = field(default_factory=list[str])
    unchanged: int = 0
    removed: list[str] = field(default_factory=list[str])
    skipped: list[Skipped] = field(default_factory=list[Skipped])
    chunks: int = 0


ProgressFn = Callable[[int, int, str], None]
"""Told ``(done, total, name)`` as the index reaches each file of a source."""


_BATCH_PASSAGES: Final = 256
"""Passages written (and embedded) per transaction while indexing."""


class _Batch:
    """Files read and cut, waiting to be written together."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.passages = 0

    def add(self, owner: str, record: FileRecord, chunks: Sequence[Chunk]) -> None:
        now = datetime.now(UTC)
        digest = file_digest(record.name)
        for index, chunk in enumerate(chunks):
            self.blocks.append(
                Block(
                    id=uuid.uuid4().hex,
                    agent=owner,
                    label=chunk_label(record.name, index),
                    value=chunk.text,
                    description=f"{record.name}, lines {chunk.start}-{chunk.end}",
                    kind=BlockKind.ARCHIVAL,
                    permission=Permission.ADMIN,
                    created_at=now,
                    updated_at=now,
                    tags=(SOURCE_TAG, f"file:{digest}"),
                    metadata={"file": record.name, "start": chunk.start, "end": chunk.end},
                )
            )
        self.blocks.append(
            Block(
                id=uuid.uuid4().hex,
                agent=owner,
                label=file_label(record.name),
                value=record.model_dump_json(),
                description=f"The index's record of {record.name}.",
                kind=BlockKind.WORKING,
                permission=Permission.ADMIN,
                created_at=now,
                updated_at=now,
            )
        )
        self.passages += len(chunks)

    def clear(self) -> None:
        self.blocks = []
        self.passages = 0


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class SourceIndex:
    """The folders and files an agent can search, open and grep, kept in a memory
    store beside (never inside) the agent's own memory.

    Args:
        store: The memory store (SQLite or PostgreSQL).
        agent: The agent the sources belong to.

    Example:
        >>> index = SourceIndex(store, "ada")
        >>> report = await index.add("~/notes")
        >>> [hit.file for hit in await index.search("dentist")]
        ['notes/health.md']
    """

    def __init__(self, store: MemoryStore, agent: str) -> None:
        self.store = store
        self.agent = agent
        self.owner = sources_agent(agent)

    # -- roots ---------------------------------------------------------------------

    async def roots(self) -> list[Path]:
        """The folders and files added, in the order they were."""
        try:
            block = await self.store.get_block(self.owner, ROOTS_LABEL)
        except NotFoundError:
            return []
        return [Path(p) for p in json.loads(block.value or "[]")]

    async def _save_roots(self, roots: Sequence[Path]) -> None:
        value = json.dumps([str(r) for r in roots])
        try:
            await self.store.update_block_text(self.owner, ROOTS_LABEL, value)
        except NotFoundError:
            await self.store.create_block(
                self.owner,
                ROOTS_LABEL,
                value,
                description="The folders and files this agent's sources come from.",
                kind=BlockKind.CORE,
                char_limit=None,
                permission=Permission.ADMIN,
            )

    # -- adding and refreshing -----------------------------------------------------

    async def add(self, path: str | Path, *, progress: ProgressFn | None = None) -> IndexReport:
        """Add a file or folder and index everything in it.

        Raises:
            InvalidInputError: ``path`` does not exist, or another source has its name.
        """
        root = await anyio.to_thread.run_sync(_resolved, Path(path))
        if root is None:
            raise InvalidInputError(f"no such file or folder: {path}")
        roots = await self.roots()
        if root not in roots:
            clash = [r for r in roots if r.name == root.name]
            if clash:
                raise InvalidInputError(
                    f"a source named {root.name!r} exists already ({clash[0]}); hits name "
                    "files by their source's name, so add the folder above, or remove it "
                    "first with `satchel sources remove`"
                )
            roots.append(root)
            await self._save_roots(roots)
        return await self._index_root(root, progress)

    async def refresh(self, *, progress: ProgressFn | None = None) -> IndexReport:
        """Index what changed in every source since the last look: new and edited
        files, and files deleted or now skipped."""
        total = IndexReport()
        for root in await self.roots():
            report = await self._index_root(root, progress)
            total.indexed += report.indexed
            total.unchanged += report.unchanged
            total.removed += report.removed
            total.skipped += report.skipped
            total.chunks += report.chunks
        return total

    async def refresh_paths(self, paths: Sequence[Path]) -> IndexReport:
        """Index again just these files (a watcher saw them change): edited ones are
        re-read, deleted ones leave the index."""
        report = IndexReport()
        roots = await self.roots()
        for changed in paths:
            path = changed.absolute()
            root = next((r for r in roots if r == path or r in path.parents), None)
            if root is None or _hidden(root, path):
                continue
            name = self._name(root, path)
            item = await anyio.to_thread.run_sync(_one_file, path)
            if isinstance(item, SourceFile) and (root == path or root in item.path.parents):
                await self._index_file(
                    SourceFile(item.path, name, item.size, item.mtime_ns), root, report
                )
            else:
                if await self._drop_file(name):
                    report.removed.append(name)
                if isinstance(item, Skipped):
                    report.skipped.append(item)
        return report

    @staticmethod
    def _name(root: Path, path: Path) -> str:
        if path == root:
            return root.name
        return f"{root.name}/{path.relative_to(root).as_posix()}"

    async def _index_root(self, root: Path, progress: ProgressFn | None) -> IndexReport:
        report = IndexReport()
        seen: set[str] = set()
        walked = await anyio.to_thread.run_sync(_walked, root)
        total = sum(1 for item in walked if isinstance(item, SourceFile))
        done = 0
        batch = _Batch()
        for item in walked:
            if isinstance(item, Skipped):
                report.skipped.append(item)
                continue
            name = item.name if item.path == root else f"{root.name}/{item.name}"
            seen.add(name)
            if progress is not None:
                progress(done, total, name)
            done += 1
            file = SourceFile(item.path, name, item.size, item.mtime_ns)
            await self._index_file(file, root, report, batch)
            if batch.passages >= _BATCH_PASSAGES:
                await self._flush(batch)
        await self._flush(batch)
        for record in await self.files():
            if record.root == str(root) and record.name not in seen:
                await self._drop_file(record.name)
                report.removed.append(record.name)
        if progress is not None:
            progress(done, total, "")
        return report

    async def _record(self, name: str) -> FileRecord | None:
        try:
            block = await self.store.get_block(self.owner, file_label(name))
        except NotFoundError:
            return None
        return FileRecord.model_validate_json(block.value)

    async def _index_file(
        self, file: SourceFile, root: Path, report: IndexReport, batch: _Batch | None = None
    ) -> None:
        """Read ``file`` and queue what changed in ``batch`` (written at once without
        one)."""
        own = batch is None
        batch = batch or _Batch()
        old = await self._record(file.name)
        if old is not None and old.mtime_ns == file.mtime_ns and old.size == file.size:
            report.unchanged += 1
            return
        text = await anyio.to_thread.run_sync(read_text, file)
        if isinstance(text, Skipped):
            report.skipped.append(text)
            if old is not None:
                await self._drop_file(file.name)
                report.removed.append(file.name)
            return
        digest = _sha(text)
        if old is not None and old.sha256 == digest:
            report.unchanged += 1  # touched, not changed: just remember the new time
            await self._write_record(old.model_copy(update={"mtime_ns": file.mtime_ns}))
            return
        chunks = chunk_text(text)
        if old is not None and old.chunks > len(chunks):
            await self._drop_chunks(old.name, old.chunks, start=len(chunks))
        record = FileRecord(
            name=file.name,
            path=str(file.path),
            root=str(root),
            sha256=digest,
            size=file.size,
            mtime_ns=file.mtime_ns,
            chunks=len(chunks),
            lines=len(_lines(text)),
        )
        batch.add(self.owner, record, chunks)
        report.indexed.append(file.name)
        report.chunks += len(chunks)
        if own:
            await self._flush(batch)

    async def _flush(self, batch: _Batch) -> None:
        """Write the queued files' passages and records in one transaction (the store
        embeds the passages in batches); a passage or record already there (an earlier
        version, or a run that stopped half-way) is replaced."""
        if batch.blocks:
            await self.store.import_records(batch.blocks, on_conflict="replace")
        batch.clear()

    async def _write_record(self, record: FileRecord) -> None:
        label = file_label(record.name)
        value = record.model_dump_json()
        try:
            await self.store.update_block_text(self.owner, label, value)
        except NotFoundError:
            await self.store.create_block(
                self.owner,
                label,
                value,
                description=f"The index's record of {record.name}.",
                kind=BlockKind.WORKING,
                char_limit=None,
                permission=Permission.ADMIN,
            )

    async def _drop_chunks(self, name: str, count: int, *, start: int = 0) -> None:
        for index in range(start, count):
            with contextlib.suppress(NotFoundError):
                await self.store.delete_block(self.owner, chunk_label(name, index))

    async def _drop_file(self, name: str) -> bool:
        record = await self._record(name)
        if record is None:
            return False
        await self._drop_chunks(name, record.chunks)
        with contextlib.suppress(NotFoundError):
            await self.store.delete_block(self.owner, file_label(name))
        return True

    async def remove(self, path: str | Path) -> list[str]:
        """Forget a source (as given to :meth:`add`, or by its name) and every file
        indexed from it; returns the files' names.

        Raises:
            InvalidInputError: No source is at that path or has that name.
        """
        roots = await self.roots()
        wanted = await anyio.to_thread.run_sync(_absolute, Path(path))
        root = next((r for r in roots if r == wanted or r.name == str(path)), None)
        if root is None:
            known = ", ".join(str(r) for r in roots) or "none"
            raise InvalidInputError(f"no source {str(path)!r}; the sources are: {known}")
        removed: list[str] = []
        for record in await self.files():
            if record.root == str(root):
                await self._drop_file(record.name)
                removed.append(record.name)
        await self._save_roots([r for r in roots if r != root])
        return removed

    async def files(self) -> list[FileRecord]:
        """Every indexed file, by name."""
        try:
            blocks = await self.store.list_blocks(self.owner, kinds=[BlockKind.WORKING])
        except NotFoundError:
            return []
        records = [
            FileRecord.model_validate_json(b.value) for b in blocks if b.label.startswith("file:")
        ]
        return sorted(records, key=lambda r: r.name)

    # -- reading -------------------------------------------------------------------

    async def search(self, query: str, *, limit: int = 10) -> list[SourceHit]:
        """The passages that best match ``query`` (words and meaning), best first."""
        if not (await self.roots()):
            return []
        hits = await self.store.search(
            self.owner, query, domains=Domain.ARCHIVAL_MEMORY, limit=limit
        )
        out: list[SourceHit] = []
        for hit in hits:
            meta = hit.metadata
            out.append(
                SourceHit(
                    file=str(meta.get("file", hit.label or "")),
                    start=int(meta.get("start", 0)),
                    end=int(meta.get("end", 0)),
                    text=hit.text,
                    score=hit.score,
                    id=hit.id,
                    relevant=is_relevant(hit),
                    hit=hit,
                )
            )
        return out

    async def _text_of(self, name: str) -> tuple[FileRecord, str]:
        record = await self._record(name)
        if record is None:
            names = [r.name for r in await self.files()]
            import difflib

            close = difflib.get_close_matches(name, names, n=5, cutoff=0.4)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise ToolRetry(
                f"no source file is named {name[:200]!r}.{hint} search_files and grep_files "
                "name files as they are indexed.",
                details={"file": name[:200], "close": close},
            )
        text = await anyio.to_thread.run_sync(_read_record, record)
        if isinstance(text, Skipped):
            raise ToolFailed(f"{name} cannot be read now: {text.reason}.")
        return record, text

    async def open(self, name: str, *, line: int = 1, lines: int = 100) -> FileWindow:
        """Lines ``line`` to ``line + lines - 1`` of an indexed file, read from disk now.

        Raises:
            ToolRetry: No file has that name (the message lists close ones), or the
                line is past the end.
        """
        _, text = await self._text_of(name)
        all_lines = _lines(text)
        total = len(all_lines)
        count = max(1, min(lines, MAX_WINDOW_LINES))
        if line > total:
            raise ToolRetry(
                f"{name} has {total} lines; start at a line from 1 to {total}.",
                details={"file": name, "lines": total},
            )
        start = max(1, line)
        end = min(total, start + count - 1)
        window = [_clip(text) for text in all_lines[start - 1 : end]]
        return FileWindow(file=name, start=start, end=end, total=total, lines=window)

    async def grep(
        self, pattern: str, *, files: str | None = None, limit: int = 50, ignore_case: bool = True
    ) -> GrepResult:
        """The lines of indexed files that match the regular expression ``pattern``.

        Args:
            pattern: A regular expression (Python syntax).
            files: A glob over the files' names (``notes/*.md``); default every file.
            limit: At most this many lines (1 to 500).
            ignore_case: Match without regard to case.

        Raises:
            ToolRetry: The pattern is not a valid expression, or too slow to run.
        """
        import regex

        _check_pattern(pattern)
        flags = regex.IGNORECASE if ignore_case else 0
        try:
            compiled = regex.compile(pattern, flags)  # pyright: ignore[reportUnknownMemberType]
        except regex.error as exc:  # pyright: ignore[reportUnknownMemberType]
            raise ToolRetry(
                f"pattern {pattern[:200]!r} is not a regular expression: {exc}. Escape "
                "special characters such as ( [ . * with a backslash, or search words with "
                "search_files.",
                details={"pattern": pattern[:200]},
            ) from None
        limit = max(1, min(limit, MAX_GREP_HITS))
        hits: list[GrepHit] = []
        searched = 0
        for record in await self.files():
            if files is not None and not fnmatch.fnmatchcase(record.name, files):
                continue
            try:
                _, text = await self._text_of(record.name)
            except ToolFailed:
                continue
            searched += 1
            for number, line in enumerate(_lines(text), start=1):
                try:
                    found = compiled.search(line, timeout=_GREP_SECONDS)  # pyright: ignore
                except TimeoutError:
                    raise ToolRetry(
                        f"pattern {pattern[:200]!r} takes too long to match (nested "
                        "repetition?); give a simpler one.",
                        details={"pattern": pattern[:200]},
                    ) from None
                if found is not None:
                    hits.append(GrepHit(file=record.name, line=number, text=_clip(line)))
                    if len(hits) >= limit:
                        return GrepResult(hits=hits, files_searched=searched, truncated=True)
        return GrepResult(hits=hits, files_searched=searched, truncated=False)


def _lines(text: str) -> list[str]:
    """The text's lines, numbered as an editor numbers them (no empty last line)."""
    lines = text.split("\n")
    return lines[:-1] if len(lines) > 1 and not lines[-1] else lines


def _clip(line: str) -> str:
    return line if len(line) <= _LINE_CHARS else line[: _LINE_CHARS - 1] + "…"


_RECURSION = re.compile(r"\(\?(?:R|[+-]?\d+|&|P>)")
_BOUNDS = re.compile(r"(?<!\\)\{(\d*)(?:,(\d*))?\}")
_MAX_BOUND: Final = 1_000
_MAX_BOUNDS_PRODUCT: Final = 100_000


def _check_pattern(pattern: str) -> None:
    """Refuse what would make the regex engine eat the machine: recursion (``(?R)``,
    ``(?1)``, ``(?&name)``) recurses without end on a match, and a repetition count in
    the millions is compiled into millions of nodes. A timeout cannot stop either."""
    if _RECURSION.search(pattern):
        raise ToolRetry(
            f"pattern {pattern[:200]!r} uses recursion ((?R), (?1), (?&name)), which grep "
            "does not run; write the repetition out.",
            details={"pattern": pattern[:200]},
        )
    product = 1
    for low, high in _BOUNDS.findall(pattern):
        bound = max(int(low or 0), int(high or 0))
        product *= max(bound, 1)
        if bound > _MAX_BOUND or product > _MAX_BOUNDS_PRODUCT:
            raise ToolRetry(
                f"pattern {pattern[:200]!r} repeats too many times (counts up to "
                f"{_MAX_BOUND:,}, and not nested into more than {_MAX_BOUNDS_PRODUCT:,}); "
                "use + or * instead of a large count.",
                details={"pattern": pattern[:200]},
            )


def _hidden(root: Path, path: Path) -> bool:
    """Whether ``path`` lies in a folder a walk of ``root`` does not enter."""
    if path == root:
        return False
    folders = path.relative_to(root).parts[:-1]
    return any(part in SKIPPED_DIRS or part.startswith(".") for part in folders)


def _resolved(path: Path) -> Path | None:
    root = path.expanduser().resolve()
    return root if root.exists() else None


def _absolute(path: Path) -> Path:
    return path.expanduser().resolve()


def _walked(root: Path) -> list[SourceFile | Skipped]:
    return list(walk(root)) if root.exists() else []


def _one_file(path: Path) -> SourceFile | Skipped | None:
    if not path.is_file():
        return None
    found = list(walk(path))
    return found[0] if found else None


def _read_record(record: FileRecord) -> str | Skipped:
    """An indexed file's text as it is on disk now, if it still stays in its source."""
    path = Path(record.path)
    root = Path(record.root)
    resolved = path.resolve()
    if not (resolved == root or root in resolved.parents):
        return Skipped(path, "it now leads outside its source")
    try:
        stat = os.stat(resolved)
    except OSError:
        return Skipped(path, "it is no longer on disk; it leaves the index at the next refresh")
    return read_text(SourceFile(resolved, record.name, stat.st_size, stat.st_mtime_ns))
