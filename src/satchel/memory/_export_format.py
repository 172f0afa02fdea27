"""The JSON-lines export format of a memory store (``satchel memory export`` and
``import``, and the console's download and upload).

A header line (``{"format": "satchel-memory", "version": 1, "agent": ...}``), then
one line per block and per message, in the store's own export order, with keys
sorted: the same memory always gives the same bytes. ``agent`` names the one agent the
file holds; it is ``null`` in a whole-store export (``--all-agents``).

Lines end at ``\\n`` and nowhere else. Text keeps every Unicode character as it is,
except U+2028, U+2029 and U+0085, which are written as JSON escapes so that no
line-splitting tool (Python's ``str.splitlines``, JavaScript) breaks a record in two.

Import streams: :func:`read_export` checks one line at a time, so a file of any size
is read with flat memory; a bad line is an :class:`~satchel.InvalidInputError` naming
its line. Which agent an
import writes to (the rule :func:`read_export` enforces):

* a file whose header names agent ``X`` holds only ``X``'s records (a line owned by
  anyone else is refused), and imports only as ``--agent X``;
* a whole-store export (header ``agent: null``) imports only with ``--all-agents``,
  the operator's explicit whole-database restore.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import IO, Any, cast

from pydantic import ValidationError

from satchel._errors import InvalidInputError
from satchel.memory._models import Block, Message, SearchHit, check_restorable, validate_agent
from satchel.memory._protocol import MemoryStore

__all__ = ["EXPORT_FORMAT", "export_lines", "read_export"]

EXPORT_FORMAT = "satchel-memory"
"""The ``format`` of an export's header line."""
_EXPORT_VERSION = 1

# Line breaks for str.splitlines (and JavaScript) that json.dumps leaves raw.
_ESCAPES = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\u0085": "\\u0085"})


def _dump(record: Block | Message | SearchHit) -> dict[str, Any]:
    return record.model_dump(mode="json")


def _line(data: dict[str, Any]) -> str:
    text = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text.translate(_ESCAPES)


async def export_lines(store: MemoryStore, agent: str | None) -> AsyncIterator[str]:
    """The export of ``agent`` (``None``: of every agent), line by line, without the
    line ends: a header line, the blocks (owner, then label order), then the messages
    (owner, then oldest first). Deterministic: the same memory gives the same lines."""
    yield _line({"format": EXPORT_FORMAT, "version": _EXPORT_VERSION, "agent": agent})
    async for record in store.export_records(agent):
        if isinstance(record, Block):
            yield _line({"type": "block", "block": _dump(record)})
        else:
            yield _line({"type": "message", "message": _dump(record)})


def _bad(number: int, problem: str) -> InvalidInputError:
    detail = " ".join(problem.split())
    if len(detail) > 300:
        detail = detail[:297] + "..."
    if not detail.endswith((".", "?", "!")):
        detail += "."
    return InvalidInputError(f"line {number}: {detail}")


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at byte {exc.start + 1})"
        ) from None


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise InvalidInputError("JSON nested too deeply to read") from None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"not JSON: {exc.msg} at column {exc.colno}") from None


def _object(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise InvalidInputError("not a JSON object")
    return cast(dict[str, Any], data)


def _header_agent(data: Any) -> str | None:
    header = _object(data)
    if header.get("format") != EXPORT_FORMAT or header.get("version") != _EXPORT_VERSION:
        raise InvalidInputError(f"not a {EXPORT_FORMAT} v{_EXPORT_VERSION} export header")
    agent = header.get("agent")
    if agent is not None and not isinstance(agent, str):
        raise InvalidInputError("the header's agent must be a name or null")
    return None if agent is None else validate_agent(agent)


def _record(data: Any) -> Block | Message:
    line = _object(data)
    kind = line.get("type")
    try:
        if kind == "block":
            record: Block | Message = Block.model_validate(line.get("block"))
        elif kind == "message":
            record = Message.model_validate(line.get("message"))
        else:
            raise InvalidInputError(f"unknown record type {kind!r}")
    except ValidationError as exc:
        error = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(part) for part in error["loc"]) or str(kind)
        raise InvalidInputError(f"{kind} field {where!r}: {error['msg']}") from None
    name = f"block {record.label!r}" if isinstance(record, Block) else f"message {record.id!r}"
    try:
        check_restorable(record)
    except ValueError as exc:
        raise InvalidInputError(f"{name}: {exc}") from None
    return record


def read_export(
    stream: IO[bytes],
    *,
    agent: str | None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[Block | Message]:
    """The records of an export, checked one line at a time as they are read.

    Args:
        stream: The export, opened in binary mode.
        agent: The agent the import writes to: the header must name it and every
            record must belong to it. ``None`` is the operator's whole-store restore
            (``--all-agents``): a whole-store file, or any agent's file, whose records
            may then name any agent (but a file that names its agent still holds only
            that agent's records).
        progress: Called with the number of bytes read so far, after each line.

    Raises:
        InvalidInputError: A line is not a valid record or breaks the rule above;
            the message names the line and the problem.
    """
    # Memory: a line may be one 100 MB block, so every copy of it counts. The line is
    # split at "\n" only (iterating a binary file does exactly that; str.splitlines
    # would also split at U+2028 and friends) and never stripped (JSON allows the
    # trailing "\r\n"); its bytes are dropped once decoded, its text once parsed, and
    # no iterator keeps either (enumerate's cached tuple would hold the last line).
    read = number = 0
    header: str | None = None
    header_seen = False
    for raw in stream:
        number += 1
        read += len(raw)
        if raw.isspace():
            continue
        try:
            text = _text(raw)
            del raw
            data = _parse(text)
            del text
            if not header_seen:
                header, header_seen = _header_agent(data), True
                _check_target(header, agent)
            else:
                record = _record(data)
                del data
                if header is not None and record.agent != header:
                    raise InvalidInputError(_foreign(record, header))
                yield record
                del record
        except ValueError as exc:
            raise _bad(number, str(exc)) from None
        if progress is not None:
            progress(read)
    if not header_seen:
        raise InvalidInputError("the file is empty, not an export.")


def _check_target(header: str | None, agent: str | None) -> None:
    if agent is None or header == agent:
        return
    if header is None:
        raise InvalidInputError(
            "this is a whole-store export (records of every agent); restore it with --all-agents"
        )
    raise InvalidInputError(
        f"this export holds the memory of agent {header!r}, not {agent!r}; import it "
        f"with --agent {header}"
    )


def _foreign(record: Block | Message, header: str) -> str:
    what = f"block {record.label!r}" if isinstance(record, Block) else f"message {record.id!r}"
    return (
        f"{what} belongs to agent {record.agent!r}, but this export is of agent "
        f"{header!r}; nothing was imported"
    )
