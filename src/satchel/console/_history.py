"""A block's history on its page: every kept version (see
:mod:`satchel.memory._history`: the last ``HISTORY_VERSIONS`` superseded versions plus
the current one) and a line diff (:mod:`difflib`) between any two of them."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from satchel._errors import InvalidInputError
from satchel.memory import Block, BlockVersion, GatedStore, MemoryStore

__all__ = ["diff_lines", "history_view"]

_CONTEXT_LINES = 3


def _current(block: Block) -> BlockVersion:
    return BlockVersion(
        block_id=block.id,
        agent=block.agent,
        label=block.label,
        version=block.version,
        value=block.value,
        description=block.description,
        permission=block.permission,
        char_limit=block.char_limit,
        kind=block.kind,
        changed_at=block.updated_at,
    )


def diff_lines(old: BlockVersion, new: BlockVersion) -> list[tuple[str, str]]:
    """The unified diff of two versions' text and settings, as ``(kind, line)`` with
    kind ``add``, ``del``, ``hunk`` or ``same``."""

    def text(version: BlockVersion) -> list[str]:
        limit = "none" if version.char_limit is None else str(version.char_limit)
        head = [
            f"# description: {version.description}",
            f"# permission: {version.permission.value}",
            f"# char_limit: {limit}",
            f"# kind: {version.kind.value}",
        ]
        return head + version.value.split("\n")

    out: list[tuple[str, str]] = []
    for line in difflib.unified_diff(
        text(old),
        text(new),
        f"version {old.version}",
        f"version {new.version}",
        n=_CONTEXT_LINES,
        lineterm="",
    ):
        if line.startswith(("---", "+++", "@@")):
            out.append(("hunk", line))
        elif line.startswith("+"):
            out.append(("add", line))
        elif line.startswith("-"):
            out.append(("del", line))
        else:
            out.append(("same", line))
    return out


def _version(raw: str | None, known: Mapping[int, BlockVersion], name: str) -> int | None:
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    if not text.isdigit() or int(text) not in known:
        shown = ", ".join(str(v) for v in known)
        raise InvalidInputError(
            f"{name}: version {text[:12]!r} is not kept; the kept ones are {shown}"
        )
    return int(text)


async def history_view(
    store: MemoryStore, block: Block, query: Mapping[str, str]
) -> dict[str, Any] | None:
    """What the block page shows of ``block``'s history: the versions, newest first,
    and the diff between ``?a=`` and ``?b=`` (by default the previous version and the
    current one). ``None`` when the store keeps no history.

    Raises:
        InvalidInputError: ``a`` or ``b`` is not a kept version.
    """
    if not isinstance(store, GatedStore):
        return None
    earlier = await store.block_history(block.agent, block.label)
    versions = {v.version: v for v in [*earlier, _current(block)]}
    a = _version(query.get("a"), versions, "a")
    b = _version(query.get("b"), versions, "b")
    if b is None:
        b = block.version
    if a is None:
        older = [v for v in versions if v < b]
        a = older[-1] if older else b
    return {
        "versions": list(reversed(versions.values())),
        "a": a,
        "b": b,
        "diff": diff_lines(versions[a], versions[b]) if a != b else [],
    }
