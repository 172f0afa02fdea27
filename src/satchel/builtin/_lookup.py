"""Finding the block a model names, by label or by id, within what it may read.

An agent reads its own blocks and those shared with it. With per-project agents
(``satchel serve --agent auto``), ``search`` also shows the person's archival entries,
labelled ``person/label``, so the tools that take a search hit open those too: the
person's own *archival* entries only, read-only, never its unshared core or working
blocks, nor another project's memory. The same rule holds by label and by id, so
nothing opens by id that would not open by label.

A name is a label first and an id second. The ids satchel makes are 32 hex digits
(imported ones may differ), and a label that happens to equal an id names the labelled
block. So :func:`find_readable` tries, in order: the agent's label, the person's label,
the agent's id, the person's id.
"""

from __future__ import annotations

from satchel._errors import InvalidInputError, NotFoundError
from satchel.builtin._views import checked
from satchel.memory import Block, BlockKind, MemoryStore

__all__ = ["find_readable", "person_entry", "person_entry_not_own", "persons_by_name"]


def _person_for(agent: str, person: str | None) -> str | None:
    """The person whose archive ``agent`` may also read, if any."""
    return person if person is not None and person != agent else None


def _is_persons_entry(block: Block, person: str) -> bool:
    return block.agent == person and block.kind is BlockKind.ARCHIVAL


async def person_entry(
    store: MemoryStore, agent: str, label: str, person: str | None
) -> Block | None:
    """The person's archival entry that ``agent`` means by ``label`` (``person/label``,
    or a bare label), or ``None`` when there is none or ``agent`` is the person.

    Call it only after ``label`` named nothing of the agent's own: the agent's blocks
    win.
    """
    who = _person_for(agent, person)
    owner, _, bare = label.rpartition("/")
    if who is None or owner not in ("", who):
        return None
    try:
        block = await store.get_block(who, bare)
    except NotFoundError:
        return None
    return block if _is_persons_entry(block, who) else None


async def person_entry_not_own(
    store: MemoryStore, agent: str, label: str, person: str | None
) -> Block | None:
    """:func:`person_entry`, once ``label`` is found to name nothing of ``agent``'s
    own; ``None`` when it does (the agent's blocks win).

    Raises:
        NotFoundError: ``label`` is a bare label shared with ``agent`` by two owners.
    """
    if _person_for(agent, person) is None:
        return None
    try:
        await checked(store.get_block(agent, label))
    except NotFoundError as exc:
        if "candidates" in exc.details:  # ambiguous among the agent's shares
            raise
        return await person_entry(store, agent, label, person)
    return None


async def persons_by_name(
    store: MemoryStore, agent: str, name: str, person: str | None
) -> Block | None:
    """The person's archival entry ``name`` names as a label (see :func:`person_entry`)
    or as an id, or ``None``. For telling a project why it may not write it."""
    return await person_entry(store, agent, name, person) or await _persons_by_id(
        store, agent, name, person
    )


async def _visible_by_id(store: MemoryStore, agent: str, block_id: str) -> Block | None:
    try:  # not through ``checked``: an impossible id is simply no id here
        return await store.get_block_by_id(agent, block_id)
    except (NotFoundError, InvalidInputError):
        return None


async def _persons_by_id(
    store: MemoryStore, agent: str, block_id: str, person: str | None
) -> Block | None:
    who = _person_for(agent, person)
    if who is None:
        return None
    block = await _visible_by_id(store, who, block_id)
    return block if block is not None and _is_persons_entry(block, who) else None


async def find_readable(store: MemoryStore, agent: str, name: str, person: str | None) -> Block:
    """The block ``agent`` means by ``name``: a label (bare or ``owner/label``), else an
    id (the ``id`` of a search hit).

    Args:
        store: The memory store.
        agent: The agent reading.
        name: A label or an id.
        person: The person's own agent with per-project agents, else ``None``.

    Raises:
        NotFoundError: Nothing readable has that label or id (one line naming both
            tries), or a bare label is ambiguous (the message lists the
            ``owner/label`` names; ids are not tried then).
    """
    try:
        return await checked(store.get_block(agent, name))
    except NotFoundError as exc:
        if "candidates" in exc.details:  # ambiguous: the agent must pick a name
            raise
    found = (
        await person_entry(store, agent, name, person)
        or await _visible_by_id(store, agent, name)
        or await _persons_by_id(store, agent, name, person)
    )
    if found is None:
        who = _person_for(agent, person)
        where = "your memory" + (f" or in {who}'s archival memory" if who is not None else "")
        raise NotFoundError(
            f"No block in {where} is labelled {name[:120]!r}, and none has that id. "
            "Search to see each entry's label and id (a conversation message is not an "
            "entry: its search result holds its full text).",
            details={"label": name[:120], "tried": ["label", "id"]},
        )
    return found
