"""Editing an MCP client's JSON configuration file without losing what else is in it.

:func:`read_config` reads the file (JSON, or JSON with comments for VS Code), the pure
:func:`merge_server` and :func:`remove_server` change one server entry and keep every
other key in its place, and :func:`write_config` backs the old file up beside it, then
replaces it atomically. ``satchel install`` (:mod:`satchel.cli._install`) uses them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from satchel._errors import SatchelUsageError

__all__ = ["merge_server", "read_config", "remove_server", "strip_jsonc", "write_config"]

_STRING = r'"(?:[^"\\\n]|\\.)*"'
_COMMENTS = re.compile(_STRING + r"|//[^\n]*|/\*.*?\*/", re.DOTALL)
_TRAILING_COMMAS = re.compile(_STRING + r"|,(?=\s*[}\]])")


def strip_jsonc(text: str) -> str:
    """``text`` without comments and trailing commas (JSONC to JSON).

    Comments become spaces (keeping line numbers for error messages); strings are left
    as they are, ``//`` inside them included. An unterminated block comment is left in
    place, for the JSON parser to report.
    """

    def blank(match: re.Match[str]) -> str:
        token = match.group(0)
        return token if token.startswith('"') else re.sub(r"[^\n]", " ", token)

    def drop_comma(match: re.Match[str]) -> str:
        token = match.group(0)
        return token if token.startswith('"') else ""

    return _TRAILING_COMMAS.sub(drop_comma, _COMMENTS.sub(blank, text))


def read_config(path: Path, *, jsonc: bool = False) -> tuple[dict[str, Any], bool]:
    """The JSON object in ``path`` (``{}`` if there is no file or it is blank).

    Args:
        path: The configuration file.
        jsonc: Accept comments and trailing commas.

    Returns:
        The object, and whether comments or trailing commas were dropped to read it.

    Raises:
        SatchelUsageError: The file cannot be read, is not JSON, or not a JSON object.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}, False
    except (OSError, UnicodeDecodeError) as exc:
        raise SatchelUsageError(f"Cannot read {str(path)!r}: {exc}.") from exc
    plain = strip_jsonc(text) if jsonc else text
    if not plain.strip():
        return {}, plain != text
    try:
        data: object = json.loads(plain)
    except json.JSONDecodeError as exc:
        raise SatchelUsageError(
            f"{str(path)!r} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
            f"{exc.msg}); nothing was changed. Fix the file, or write another one with "
            "--config."
        ) from exc
    if not isinstance(data, dict):
        raise SatchelUsageError(
            f"{str(path)!r} holds a JSON {type(data).__name__}, not an object; nothing was changed."
        )
    return data, plain != text  # pyright: ignore[reportUnknownVariableType]


def _servers(config: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    servers = config.get(key)
    if servers is None:
        return {}
    if not isinstance(servers, dict):
        raise SatchelUsageError(
            f"{key!r} in {str(path)!r} is not a JSON object; nothing was changed."
        )
    return dict(servers)  # pyright: ignore[reportUnknownArgumentType]


def merge_server(
    config: Mapping[str, Any], key: str, name: str, entry: Mapping[str, Any], *, path: Path
) -> tuple[dict[str, Any], Any]:
    """``config`` with ``entry`` as server ``name`` under ``key``; every other key and
    server kept in its place.

    Returns:
        The new configuration, and the entry it replaced (``None`` if there was none).

    Raises:
        SatchelUsageError: ``key`` holds something other than an object.
    """
    merged = dict(config)
    servers = _servers(merged, key, path)
    previous = servers.get(name)
    servers[name] = dict(entry)
    merged[key] = servers
    return merged, previous


def remove_server(
    config: Mapping[str, Any], key: str, name: str, *, path: Path
) -> tuple[dict[str, Any], Any]:
    """``config`` without server ``name`` under ``key``.

    Returns:
        The new configuration, and the entry removed (``None`` if there was none).

    Raises:
        SatchelUsageError: ``key`` holds something other than an object.
    """
    merged = dict(config)
    servers = _servers(merged, key, path)
    previous = servers.pop(name, None)
    if key in merged:
        merged[key] = servers
    return merged, previous


def _backup_path(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}.{stamp}.bak")
    count = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.{stamp}-{count}.bak")
        count += 1
    return candidate


def write_config(path: Path, config: Mapping[str, Any]) -> Path | None:
    """Write ``config`` to ``path`` atomically, after copying the old file beside it.

    Parent directories are created. A symbolic link is followed (its target is
    rewritten), and an existing file keeps its permission bits; a new one is readable by
    its owner only.

    Returns:
        The backup of the old file, or ``None`` if there was no file.

    Raises:
        SatchelUsageError: The file or its directory cannot be written.
    """
    target = path.resolve() if path.is_symlink() else path
    text = json.dumps(config, indent=2, ensure_ascii=False) + "\n"
    backup: Path | None = None
    temporary: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            backup = _backup_path(target)
            shutil.copy2(target, backup)
        handle, temporary = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
        )
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if target.exists():
            shutil.copymode(target, temporary)
        os.replace(temporary, target)
        temporary = None
    except OSError as exc:
        raise SatchelUsageError(
            f"Cannot write {str(target)!r}: {exc.strerror or exc}; nothing was changed."
        ) from exc
    finally:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
    return backup
