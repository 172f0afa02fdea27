"""Memory as Markdown files a person can read, edit and keep in git.

Layout of an export of one agent into ``DIR``::

    DIR/index.md                 what is here: every block, its kind, size and file
    DIR/blocks/<name>.md         each core and working block the agent owns
    DIR/archival/<name>.md       each archival entry the agent owns

Each file is YAML front matter (``label``, ``kind``, ``description``, ``permission``,
``char_limit``, ``pinned``, ``tags``, ``version``, timestamps, ``id``, ``shares``,
``metadata``) between ``---`` lines, then the block's value exactly as stored. File
names come from the label and are the same on every export and safe on every OS:
lower-case letters, digits, ``.``, ``_`` and ``-`` stay; anything else (upper case too,
so two labels never differ only by case) is ``%xx`` of its UTF-8 bytes.

Importing reads the same layout back (:func:`import_markdown`): a file whose text or
description differs from its block updates the block through the permission gate,
with the exported ``version`` as the expected one, so a block that changed in the store
since the export is reported as a conflict and never overwritten; a file for a label
the store lacks becomes a new block; nothing is deleted. ``exact=True`` instead
restores the records as they were (ids, versions, timestamps), into an empty store.

Hand-written because it is a small file format of satchel's own; YAML itself is read and
written by PyYAML.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import anyio.to_thread
import yaml

from satchel._errors import (
    InvalidInputError,
    MemoryStoreError,
    NotFoundError,
    VersionConflictError,
)
from satchel.memory._models import Block, BlockKind, Permission
from satchel.memory._permissions import RequestOrigin
from satchel.memory._protocol import MemoryStore

__all__ = [
    "MarkdownReport",
    "block_path",
    "export_markdown",
    "file_name",
    "import_block",
    "import_markdown",
    "read_block_file",
    "render_block",
    "write_index",
]

_KEEP = re.compile(r"[a-z0-9._-]")
_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{i}" for i in range(10)),
    *(f"lpt{i}" for i in range(10)),
}
_FOLDERS = {BlockKind.ARCHIVAL: "archival"}
_DEFAULT_FOLDER = "blocks"


@dataclass(kw_only=True)
class MarkdownReport:
    """What an export or import did.

    Attributes:
        written: Files written (export) or blocks updated (import).
        created: Blocks created from new files (import).
        unchanged: Files that matched their block (import).
        conflicts: Labels whose block changed in the store since the export, with why.
        refused: Labels whose write the permission gate (or the char limit) refused,
            with its message.
        ignored: Labels whose file changed a setting an import never changes
            (permission, kind, char limit, pinned, tags), with what was left as it is.
    """

    written: list[str] = field(default_factory=list[str])
    created: list[str] = field(default_factory=list[str])
    unchanged: list[str] = field(default_factory=list[str])
    conflicts: dict[str, str] = field(default_factory=dict[str, str])
    refused: dict[str, str] = field(default_factory=dict[str, str])
    ignored: dict[str, str] = field(default_factory=dict[str, str])


_MAX_STEM = 96
"""The longest file stem written as is. Longer ones are cut and end in a hash of the
label: every common filesystem takes 255 bytes, eCryptfs only 143, and a label of 100
characters outside ASCII escapes to 900."""


def file_name(label: str) -> str:
    """The file name of ``label``: stable, unique per label, and safe on every OS and
    filesystem (ASCII only, at most 116 bytes).

    Example:
        >>> file_name("Ada's notes")
        '%41da%27s%20notes.md'
    """
    parts = [ch if _KEEP.match(ch) else "".join(f"%{b:02x}" for b in ch.encode()) for ch in label]
    stem = "".join(parts)
    if stem.startswith(".") or stem.split(".")[0] in _RESERVED:
        stem = "".join(f"%{b:02x}" for b in stem[0].encode()) + stem[1:]
    if len(stem) > _MAX_STEM:
        cut = stem[:_MAX_STEM]
        escape = cut.rfind("%", len(cut) - 2)
        if escape != -1:  # never end inside an escape
            cut = cut[:escape]
        stem = cut + "~" + hashlib.sha256(label.encode()).hexdigest()[:16]
    return stem + ".md"


def _front(block: Block) -> dict[str, Any]:
    return {
        "label": block.label,
        "kind": block.kind.value,
        "description": block.description,
        "permission": block.permission.value,
        "char_limit": block.char_limit,
        "pinned": block.pinned,
        "tags": list(block.tags),
        "version": block.version,
        "created_at": block.created_at.isoformat(),
        "updated_at": block.updated_at.isoformat(),
        "id": block.id,
        "shares": {agent: level.value for agent, level in sorted(block.shares.items())},
        "metadata": dict(block.metadata),
    }


def render_block(block: Block) -> str:
    """A block's file: YAML front matter, then its value exactly as stored."""
    front = yaml.safe_dump(_front(block), sort_keys=False, allow_unicode=True)
    return f"---\n{front}---\n{block.value}"


async def export_markdown(store: MemoryStore, agent: str, directory: Path) -> MarkdownReport:
    """Write every block ``agent`` owns into ``directory`` (see the module doc). Files
    of blocks that no longer exist are left alone; the index says what is current."""
    blocks = [b for b in await store.list_blocks(agent) if b.agent == agent]
    written = await anyio.to_thread.run_sync(_write_all, agent, blocks, directory)
    return MarkdownReport(written=written)


def block_path(directory: Path, block: Block) -> Path:
    """Where ``block``'s file goes in an export into ``directory``."""
    return directory / _FOLDERS.get(block.kind, _DEFAULT_FOLDER) / file_name(block.label)


def _write_all(agent: str, blocks: list[Block], directory: Path) -> list[str]:
    written: list[str] = []
    for block in blocks:
        path = block_path(directory, block)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_block(block), encoding="utf-8", newline="")
        written.append(str(path.relative_to(directory)))
    write_index(agent, blocks, directory)
    return written


def write_index(agent: str, blocks: list[Block], directory: Path) -> None:
    """Write ``index.md``: every block, its kind, size and file."""
    rows = ["# Memory of " + agent, "", "| label | kind | chars | file |", "|---|---|---|---|"]
    for block in sorted(blocks, key=lambda b: (b.kind.value, b.label)):
        path = block_path(directory, block)
        label = block.label.replace("|", "\\|")
        where = path.relative_to(directory).as_posix()
        rows.append(f"| {label} | {block.kind.value} | {block.chars} | {where} |")
    directory.mkdir(parents=True, exist_ok=True)
    text = "\n".join(rows) + "\n"
    index = directory / "index.md"
    if not index.is_file() or index.read_text(encoding="utf-8") != text:
        index.write_text(text, encoding="utf-8")


def read_block_file(path: Path, agent: str) -> Block:
    """The block a file of an export describes.

    Raises:
        InvalidInputError: the file has no front matter, or it is not a valid block.
    """
    text = path.read_text(encoding="utf-8")
    end = text.find("\n---\n", 3)  # not `in text[3:]`: that copies a large value whole
    if not text.startswith("---\n") or end < 0:
        raise InvalidInputError(f"{path.name}: no front matter between '---' lines")
    try:
        front: Any = yaml.safe_load(text[4 : end + 1])
    except yaml.YAMLError as exc:
        raise InvalidInputError(f"{path.name}: the front matter is not YAML: {exc}") from None
    if not isinstance(front, dict):
        raise InvalidInputError(f"{path.name}: the front matter is not a mapping")
    data = cast(dict[str, Any], front)
    now = datetime.now().astimezone()
    try:
        return Block.model_validate(
            {
                **data,
                "agent": agent,
                "value": text[end + 5 :],
                "id": data.get("id") or f"md-{file_name(str(data.get('label')))}",
                "created_at": data.get("created_at") or now,
                "updated_at": data.get("updated_at") or now,
                "shares": {
                    str(k): Permission(v)
                    for k, v in cast(dict[Any, Any], data.get("shares") or {}).items()
                },
                "metadata": data.get("metadata") or {},
                "tags": tuple(data.get("tags") or ()),
            }
        )
    except ValueError as exc:
        raise InvalidInputError(f"{path.name}: not a valid block: {exc}") from None


def _read_all(directory: Path, agent: str) -> list[tuple[Path, Block]]:
    if not (directory / "index.md").is_file():
        raise InvalidInputError(f"{str(directory)!r} holds no Markdown export (no index.md)")
    return [(path, read_block_file(path, agent)) for path in _files(directory)]


def _files(directory: Path) -> Iterable[Path]:
    for folder in (_DEFAULT_FOLDER, *_FOLDERS.values()):
        yield from sorted((directory / folder).glob("*.md"))


async def import_markdown(
    store: MemoryStore, agent: str, directory: Path, *, exact: bool = False
) -> MarkdownReport:
    """Read an export back into ``agent``'s memory (see the module doc).

    Raises:
        InvalidInputError: ``directory`` holds no export, or a file is unreadable
            (nothing is changed then).
    """
    files = await anyio.to_thread.run_sync(_read_all, directory, agent)
    report = MarkdownReport()
    if exact:
        await store.import_records([block for _, block in files])
        report.created = [block.label for _, block in files]
        return report
    origin = RequestOrigin(channel="cli")
    for _, block in files:
        await import_block(store, agent, block, report, origin=origin)
    return report


def _settings_changed(current: Block, block: Block) -> list[str]:
    """The settings a file gives other values than the store holds."""
    pairs = {
        "permission": (current.permission, block.permission),
        "kind": (current.kind, block.kind),
        "char_limit": (current.char_limit, block.char_limit),
        "pinned": (current.pinned, block.pinned),
        "tags": (tuple(current.tags), tuple(block.tags)),
    }
    return [name for name, (stored, given) in pairs.items() if stored != given]


async def import_block(
    store: MemoryStore,
    agent: str,
    block: Block,
    report: MarkdownReport,
    *,
    origin: RequestOrigin | None = None,
) -> Block | None:
    """Apply one block read from a file (:func:`read_block_file`) to ``agent``'s memory,
    as :func:`import_markdown` does, and note the outcome in ``report``.

    Returns:
        The block as stored now when it was created or updated; ``None`` when it was
        unchanged, in conflict or refused.
    """
    try:
        current: Block | None = await store.get_block(agent, block.label)
    except NotFoundError:  # a file for a label the store lacks: a new block
        current = None
    if current is not None and current.agent != agent:
        report.refused[block.label] = f"the block is {current.agent!r}'s, shared with {agent!r}"
        return None
    if current is None:
        try:
            made = await store.create_block(
                agent, block.label, block.value, description=block.description,
                kind=block.kind, permission=block.permission, char_limit=block.char_limit,
                pinned=block.pinned, tags=block.tags, metadata=block.metadata,
            )  # fmt: skip
        except MemoryStoreError as exc:  # the char limit, or a label taken meanwhile
            report.refused[block.label] = exc.message
            return None
        report.created.append(block.label)
        return made
    settings = _settings_changed(current, block)
    if settings:
        report.ignored[block.label] = (
            f"{', '.join(settings)} changed in the file and left as stored: an import "
            "changes only a block's text and description (use satchel memory configure, "
            "or context archive/load, for the rest)"
        )
    if current.value == block.value and current.description == block.description:
        report.unchanged.append(block.label)
        return None
    if current.version != block.version:
        report.conflicts[block.label] = (
            f"changed in the store since the export (version {block.version} exported, "
            f"{current.version} now); export again and redo the edit"
        )
        return None
    try:
        updated = await store.update_block_text(
            agent,
            block.label,
            block.value,
            expected_version=block.version,
            description=block.description,
            origin=origin,
        )
    except VersionConflictError:
        report.conflicts[block.label] = "changed in the store while importing"
        return None
    except MemoryStoreError as exc:  # the gate, consent or the char limit said no
        report.refused[block.label] = exc.message
        return None
    report.written.append(block.label)
    return updated
