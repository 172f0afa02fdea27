"""The JSON-lines format of ``satchel memory export`` and ``import``.

A header line (``{"format": "satchel-memory", "version": 1, "agent": ...}``), then
one line per block and per message, in the store's own export order, with keys
sorted: the same memory always gives the same bytes. Import restores the records
exactly through :meth:`~satchel.memory.MemoryStore.import_records`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import typer
from pydantic import ValidationError

from satchel.memory import Block, MemoryStore, Message, OnConflict, SearchHit
from satchel.memory._models import validate_agent, validate_label

__all__ = ["EXPORT_FORMAT", "export_lines", "import_lines", "parse_export"]

EXPORT_FORMAT = "satchel-memory"
"""The ``format`` of an export's header line."""
_EXPORT_VERSION = 1


def _dump(record: Block | Message | SearchHit) -> dict[str, Any]:
    return record.model_dump(mode="json")


def _line(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


async def export_lines(store: MemoryStore, agent: str) -> list[str]:
    """The export of ``agent``: a header line, its own blocks (kind, then label order),
    then its messages, oldest first. Deterministic: the same memory gives the same
    lines."""
    lines = [_line({"format": EXPORT_FORMAT, "version": _EXPORT_VERSION, "agent": agent})]
    async for record in store.export_records(agent):
        if isinstance(record, Block):
            lines.append(_line({"type": "block", "block": _dump(record)}))
        else:
            lines.append(_line({"type": "message", "message": _dump(record)}))
    return lines


def parse_export(lines: Iterable[str]) -> list[Block | Message]:
    """Validate every line of an export; a bad one is a usage error naming its line."""
    records: list[Block | Message] = []
    header_seen = False
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            if not header_seen:
                if data.get("format") != EXPORT_FORMAT or data.get("version") != _EXPORT_VERSION:  # pyright: ignore[reportUnknownMemberType]
                    raise ValueError(f"not a {EXPORT_FORMAT} v{_EXPORT_VERSION} export header")
                header_seen = True
                continue
            kind = data.get("type")  # pyright: ignore[reportUnknownMemberType,reportUnknownVariableType]
            if kind == "block":
                block = Block.model_validate(data.get("block"))  # pyright: ignore[reportUnknownMemberType]
                validate_label(block.label)
                for name in (block.agent, *block.shares):
                    validate_agent(name)
                records.append(block)
            elif kind == "message":
                message = Message.model_validate(data.get("message"))  # pyright: ignore[reportUnknownMemberType]
                validate_agent(message.agent)
                records.append(message)
            else:
                raise ValueError(f"unknown record type {kind!r}")
        except (ValueError, ValidationError) as exc:
            detail = " ".join(str(exc).split())[:200]
            raise typer.BadParameter(f"line {number}: {detail}", param_hint="'FILE'") from None
    if not header_seen:
        raise typer.BadParameter("the file is empty, not an export.", param_hint="'FILE'")
    return records


async def import_lines(
    store: MemoryStore, records: Sequence[Block | Message], *, on_conflict: OnConflict = "error"
) -> int:
    """Restore ``records`` exactly (ids, versions, timestamps, shares), all or none, and
    embed them for search, through the store's own
    :meth:`~satchel.memory.MemoryStore.import_records`.

    Raises:
        AlreadyExistsError: A block or message in ``records`` exists already.
    """
    report = await store.import_records(
        records, on_conflict=on_conflict, batch_size=max(1, len(records))
    )
    return report.blocks + report.messages
