"""Reading an agent file's bytes into :class:`~satchel.agentfile.LettaAgentFile`, with
one-line errors for everything a file can get wrong.

A file is read whole (it must be under :data:`MAX_FILE_BYTES`), parsed as JSON, and
checked against the models of :mod:`satchel.agentfile._schema`. Two older shapes are
recognised: a document whose JSON is itself a JSON string (some published files were
saved so) is read, and Letta's earlier single-agent shape (``core_memory`` at the top)
is refused with a line naming it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final, cast

from pydantic import ValidationError

from satchel._errors import InvalidInputError
from satchel.agentfile._schema import LettaAgentFile

__all__ = ["MAX_FILE_BYTES", "MAX_TEXT_CHARS", "parse_agent_file", "read_agent_file"]

MAX_FILE_BYTES: Final = 64 * 1024 * 1024
"""The largest agent file satchel reads (64 MiB)."""

MAX_TEXT_CHARS: Final = 1_000_000
"""The longest block value, message or passage an import accepts (a million
characters; Letta's own blocks hold 20,000 by default)."""

_EARLIER_KEYS = frozenset({"core_memory", "version", "in_context_message_indices"})


def read_agent_file(path: str | Path) -> LettaAgentFile:
    """Read and check the agent file at ``path``.

    Raises:
        InvalidInputError: The file is too large, not JSON, of an earlier shape or of
            the wrong shape (one line naming the field).
        OSError: The file cannot be read.
    """
    where = Path(path)
    size = where.stat().st_size
    if size > MAX_FILE_BYTES:
        raise InvalidInputError(
            f"{where.name} is {size:,} bytes, over the {MAX_FILE_BYTES:,} an agent file may be"
        )
    return parse_agent_file(where.read_bytes(), name=where.name)


def parse_agent_file(data: bytes | str, *, name: str = "the agent file") -> LettaAgentFile:
    """Check the text of an agent file and return it as models.

    Raises:
        InvalidInputError: See :func:`read_agent_file`.
    """
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInputError(f"{name} is over the {MAX_FILE_BYTES:,} bytes an agent file may be")
    document = _json(data, name)
    if isinstance(document, str):  # saved as a JSON string holding the JSON
        document = _json(document, name)
    if not isinstance(document, dict):
        raise InvalidInputError(
            f"{name} is a JSON {type(document).__name__}, not an object with 'agents'"
        )
    fields = cast(dict[str, Any], document)
    if "agents" not in fields and _EARLIER_KEYS & fields.keys():
        raise InvalidInputError(
            f"{name} is in Letta's earlier single-agent shape ('core_memory' at the top, "
            "before AgentFileSchema); export it again from a current Letta to import it"
        )
    try:
        return LettaAgentFile.model_validate(fields)
    except ValidationError as exc:
        raise InvalidInputError(f"{name}: {_first_error(exc)}") from None
    except RecursionError:
        raise InvalidInputError(f"{name} is nested too deeply") from None


def _json(data: bytes | str, name: str) -> Any:
    try:
        return json.loads(data)
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"{name} is not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"{name} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    except RecursionError:
        raise InvalidInputError(f"{name} is nested too deeply") from None


def _first_error(exc: ValidationError) -> str:
    """The first field error, as ``agents[0].name: Input should be a valid string``."""
    error = exc.errors(include_url=False)[0]
    path = ""
    for part in error["loc"]:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    more = exc.error_count() - 1
    also = f" (and {more} more error{'s' if more != 1 else ''})" if more else ""
    return f"{path or 'document'}: {error['msg']}{also}"
