"""Merging one agent's memory into another's: the rules every backend applies, once.

A person whose memory ended up under two names (``default`` in the editors, ``me`` in
Claude Desktop) brings it together with :meth:`~satchel.memory.GatedStore.merge_agents`
(``satchel memory merge FROM INTO``). Nothing is lost:

- a block whose label ``INTO`` does not own moves to ``INTO`` as it is (id, version,
  history, vector, shares);
- a block whose label ``INTO`` owns too (``human``, ``persona``) is *joined*:
  ``INTO``'s text, then each line of ``FROM``'s that ``INTO``'s does not hold yet
  (:func:`join_lines`), in one new version of ``INTO``'s block, whose shares and tags
  become the union of both; ``FROM``'s block is then deleted;
- conversations move to ``INTO`` (ids and times kept);
- blocks of other agents shared with ``FROM`` are shared with ``INTO`` instead, at the
  higher of the two levels (projects keep seeing the person's blocks).

:func:`plan_merge` reads both agents and decides every step; the backend's
``merge_agents`` writes them in one transaction, first checking that every block it
read is still at the version it read (else :class:`~satchel.VersionConflictError`,
nothing written), so a write that lands meanwhile is never overwritten.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from satchel._errors import InvalidInputError, VersionConflictError
from satchel.memory._models import Block, Permission, normalise_tags, utc_now, validate_agent

__all__ = [
    "JoinedBlock",
    "MergeReport",
    "MergeSteps",
    "check_unchanged",
    "join_lines",
    "moved_shares",
    "plan_merge",
]

F32 = npt.NDArray[np.float32]


class JoinedBlock(BaseModel):
    """A label both agents owned, joined into the target's block.

    Attributes:
        label: The label.
        lines_added: Lines of the source's text that the target's did not hold.
        chars: The joined text's length.
        char_limit: The block's limit (``None``: none); a join may go over it, and is
            kept whole: shorten the block afterwards.
    """

    model_config = ConfigDict(frozen=True)

    label: str
    lines_added: int
    chars: int
    char_limit: int | None


class MergeReport(BaseModel):
    """What a merge did (or, with ``dry_run``, would do).

    Attributes:
        source: The agent merged from (left without blocks or messages).
        target: The agent merged into.
        moved: Labels of the blocks that moved to ``target`` as they were.
        joined: The labels both owned, joined into ``target``'s block.
        messages: Conversation messages moved.
        reshared: Other agents' blocks that were shared with ``source`` and now are
            with ``target``.
        dry_run: Whether nothing was written.
    """

    model_config = ConfigDict(frozen=True)

    source: str
    target: str
    moved: list[str]
    joined: list[JoinedBlock]
    messages: int
    reshared: int
    dry_run: bool


@dataclass(frozen=True, kw_only=True)
class MergeSteps:
    """What a backend's ``merge_agents`` writes, in one transaction.

    Attributes:
        source: The agent merged from.
        target: The agent merged into.
        read: Every block ``source`` owned, and each of ``target``'s that is joined:
            id to the version read. The write checks them first.
        joined: For each joined label: the target's block as it is to be written
            (text, tags and shares; its version is bumped by the write), the source's
            block to delete, and the joined text's vector (``None``: none).
    """

    source: str
    target: str
    read: Mapping[str, int]
    joined: Sequence[tuple[Block, Block, F32 | None]]


def join_lines(kept: str, added: str) -> tuple[str, int]:
    """``kept``, then every non-empty line of ``added`` that ``kept`` lacks (compared
    without surrounding spaces), in ``added``'s order; and how many were added.

    Example:
        >>> join_lines("Likes tea.\\nLives in Oslo.", "Lives in Oslo.\\nHas a cat.")
        ('Likes tea.\\nLives in Oslo.\\nHas a cat.', 1)
    """
    have = {line.strip() for line in kept.splitlines()}
    new: list[str] = []
    for line in added.splitlines():
        key = line.strip()
        if key and key not in have:
            new.append(line)
            have.add(key)
    if not new:
        return kept, 0
    head = kept.rstrip("\n")
    return (head + "\n" if head else "") + "\n".join(new), len(new)


def moved_shares(
    shares: Mapping[str, Permission], *, owner: str, source: str, target: str
) -> dict[str, Permission]:
    """``shares`` of a block owned by ``owner`` once ``source`` is merged into
    ``target``: ``source``'s share becomes ``target``'s (the higher level wins), and no
    block stays shared with its own owner."""
    out = {who: level for who, level in shares.items() if who != source}
    if source in shares:
        out[target] = max(shares[source], out.get(target, shares[source]))
    out.pop(owner, None)
    return out


def check_unchanged(read: Mapping[str, int], now: Mapping[str, int], source: str) -> None:
    """Refuse a merge whose blocks changed since they were read.

    Args:
        read: Id to version, as :func:`plan_merge` read them.
        now: Id to version of the same blocks, and of every block ``source`` owns,
            read inside the writing transaction.
        source: The agent merged from, for the message.

    Raises:
        VersionConflictError: A block changed, went, or ``source`` has a new one.
    """
    if dict(read) != dict(now):
        raise VersionConflictError(
            f"the memory of {source!r} changed while the merge was planned; nothing was "
            "merged: run it again",
            details={"agent": source},
        )


def _joined(kept: Block, dropped: Block, source: str, target: str) -> tuple[Block, int]:
    value, added = join_lines(kept.value, dropped.value)
    shares = moved_shares(kept.shares, owner=target, source=source, target=target)
    for who, level in dropped.shares.items():
        if who not in (source, target):
            shares[who] = min(max(level, shares.get(who, level)), kept.permission)
    block = kept.model_copy(
        update={
            "value": value,
            "tags": normalise_tags((*kept.tags, *dropped.tags)),
            "shares": shares,
            "updated_at": utc_now(),
        }
    )
    return block, added


def plan_merge(
    source: str, target: str, owned_by_source: Sequence[Block], owned_by_target: Sequence[Block]
) -> tuple[MergeSteps, list[str], list[JoinedBlock]]:
    """Decide a merge from the blocks each agent owns (vectors are added later).

    Returns:
        The steps (without vectors), the labels that move, and the joined labels.

    Raises:
        InvalidInputError: ``source`` and ``target`` are the same agent, or a name is
            not an agent name.
    """
    validate_agent(source)
    validate_agent(target)
    if source == target:
        raise InvalidInputError(f"cannot merge {source!r} into itself")
    theirs = {block.label: block for block in owned_by_target}
    read = {block.id: block.version for block in owned_by_source}
    joined: list[tuple[Block, Block, F32 | None]] = []
    moved: list[str] = []
    report: list[JoinedBlock] = []
    for block in owned_by_source:
        kept = theirs.get(block.label)
        if kept is None:
            moved.append(block.label)
            continue
        after, added = _joined(kept, block, source, target)
        read[kept.id] = kept.version
        joined.append((after, block, None))
        report.append(
            JoinedBlock(
                label=block.label,
                lines_added=added,
                chars=len(after.value),
                char_limit=after.char_limit,
            )
        )
    steps = MergeSteps(source=source, target=target, read=read, joined=joined)
    return steps, moved, report
