"""Which files of a source folder are read, and their text.

A source is a file or a folder the person points an agent at. Every file under it is
either read (text, Markdown, code, PDF) or skipped with a reason the person can act on:
binary, too large, unreadable, a link that leads outside the source, or in a folder
nobody wants indexed (``.git``, ``node_modules``, virtual environments). Nothing here
raises on a bad file: a skip is data, not an error.

PDF text comes from ``pypdf`` (maintained, pure Python); everything else is decoded as
UTF-8, or Latin-1 when that fails and the bytes hold no NUL (a NUL means binary).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["MAX_FILE_BYTES", "SKIPPED_DIRS", "Skipped", "SourceFile", "read_text", "walk"]

logger = logging.getLogger("satchel.sources")

MAX_FILE_BYTES: Final = 5_000_000
"""A file larger than this (5 MB) is skipped: it is data, not notes."""

MAX_FILES: Final = 100_000
"""The most files one source may hold; the rest are skipped with a reason."""

SKIPPED_DIRS: Final = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "dist",
        "build",
        ".idea",
        ".vscode",
    }
)
"""Folders never indexed: version control, dependencies, caches and build output."""

_BINARY_SUFFIXES: Final = frozenset(
    {
        ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".bmp", ".tiff", ".zip", ".gz",
        ".tgz", ".bz2", ".xz", ".7z", ".rar", ".tar", ".whl", ".so", ".dll", ".dylib",
        ".exe", ".bin", ".o", ".a", ".class", ".jar", ".pyc", ".mp3", ".mp4", ".wav",
        ".mov", ".avi", ".mkv", ".flac", ".ogg", ".woff", ".woff2", ".ttf", ".otf",
        ".sqlite", ".db", ".onnx", ".pt", ".npy", ".parquet", ".xlsx", ".docx", ".pptx",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file to index.

    Attributes:
        path: Its absolute, resolved path.
        name: How hits name it: its path relative to the source's folder (the file's
            own name for a single-file source), with ``/`` separators.
        size: Its size in bytes.
        mtime_ns: Its modification time.
    """

    path: Path
    name: str
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file left out, and why (``binary``, ``larger than 5 MB``...)."""

    path: Path
    reason: str


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def walk(source: Path) -> Iterator[SourceFile | Skipped]:
    """Every file of ``source`` (a file or a folder), as a file to read or a skip.

    Folders in :data:`SKIPPED_DIRS` and hidden folders are not entered; links are
    followed only while they stay inside ``source``.
    """
    root = source.resolve()
    if root.is_file():
        yield _file(root, root, root.name)
        return
    count = 0
    for folder, dirs, files in os.walk(root, followlinks=False, onerror=_log_walk_error):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for link in [d for d in dirs if (here / d).is_symlink()]:
            dirs.remove(link)
            target = (here / link).resolve()
            if not _inside(target, root):
                yield Skipped(here / link, "a link to a folder outside the source")
        for name in sorted(files):
            path = here / name
            count += 1
            if count > MAX_FILES:
                yield Skipped(path, f"the source holds more than {MAX_FILES:,} files")
                continue
            resolved = path.resolve()
            if not _inside(resolved, root):
                yield Skipped(path, "a link to a file outside the source")
                continue
            yield _file(resolved, path, path.relative_to(root).as_posix())


def _log_walk_error(error: OSError) -> None:
    logger.warning("cannot read the folder %s: %s", error.filename, error.strerror)


def _file(resolved: Path, path: Path, name: str) -> SourceFile | Skipped:
    try:
        stat = resolved.stat()
    except OSError as exc:
        return Skipped(path, f"unreadable ({exc.strerror or exc})")
    if not resolved.is_file():
        return Skipped(path, "not a regular file")
    if resolved.suffix.lower() in _BINARY_SUFFIXES:
        return Skipped(path, "binary")
    if stat.st_size > MAX_FILE_BYTES:
        return Skipped(path, f"larger than {MAX_FILE_BYTES // 1_000_000} MB")
    return SourceFile(path=resolved, name=name, size=stat.st_size, mtime_ns=stat.st_mtime_ns)


def read_text(file: SourceFile) -> str | Skipped:
    """The file's text, or why it cannot be read."""
    try:
        data = file.path.read_bytes()
    except OSError as exc:
        return Skipped(file.path, f"unreadable ({exc.strerror or exc})")
    if file.path.suffix.lower() == ".pdf" or data.startswith(b"%PDF-"):
        return _pdf_text(file.path, data)
    if b"\x00" in data[:8192]:
        return Skipped(file.path, "binary")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _pdf_text(path: Path, data: bytes) -> str | Skipped:
    import io

    try:
        from pypdf import PdfReader
        from pypdf.errors import PyPdfError
    except ImportError:  # pragma: no cover - pypdf is a dependency
        return Skipped(path, "a PDF, and pypdf is not installed")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            return Skipped(path, "an encrypted PDF")
        pages = [page.extract_text() or "" for page in reader.pages]
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, RecursionError) as exc:
        return Skipped(path, f"a PDF pypdf cannot read ({type(exc).__name__})")
    text = "\n".join(pages).strip()
    if not text:
        return Skipped(path, "a PDF without text (scanned pages?)")
    return text
