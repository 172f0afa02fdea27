"""``context load``/``archive``/``swap`` under another label: copying a block between
archival memory and the context instead of moving it in place.

Moving in place (no target label) is one kind change: the block keeps its label, its
text and its history, and the permission table's overwrite row decides. With a target
label (the seed's semantics, see docs/memory.md):

* **load into a new label** copies an archival entry into a new working block the agent
  owns, and keeps the entry. Reading is always allowed and the copy is the agent's own,
  so no gate is passed; the copy gets the agent's effective level on the entry (a
  read-only entry gives a read-only copy: no escalation by copying).
* **archive into another label** writes the block's text to an archival entry (a new
  one, or an existing one under the overwrite rule), then removes the block from the
  context. Removing a block is a delete, which the table allows at ``admin`` only; that
  is checked before anything is written, and the entry is written before the block is
  removed, so a failure never loses the text.
* **swap with a target** (``archive_target``, ``load_target``) is the two steps above,
  or their in-place forms, in order: everything that can be checked (kinds, labels,
  the table) is checked before the first write, so a swap the table refuses changes
  nothing; only a human refusing consent to the second step can leave the first done.
  A swap with no target is one atomic kind change of both blocks.
"""

from __future__ import annotations

from satchel._errors import (
    AlreadyExistsError,
    NotFoundError,
    PermissionDeniedError,
    SatchelError,
    ToolRetry,
)
from satchel.builtin._views import checked
from satchel.memory import (
    Block,
    BlockKind,
    MemoryStore,
    Operation,
    Permission,
    RequestOrigin,
    Verdict,
    effective_permission,
    verdict,
)

__all__ = ["archive_into", "copy_entry", "load_copy", "swap_in_steps"]


def _level(block: Block, agent: str) -> Permission:
    level = effective_permission(block, agent)
    assert level is not None  # the store showed the block to this agent
    return level


def _own_label(label: str, what: str) -> None:
    """A new block is always the agent's own: ``owner/label`` cannot name one."""
    if "/" in label:
        raise PermissionDeniedError(
            f"{what} {label!r} names another agent's memory; a new block is created in "
            "your own memory, so give a bare label.",
            details={"label": label, "operation": "create"},
        )


async def load_copy(store: MemoryStore, agent: str, label: str, target: str) -> Block:
    """Create the working block ``target`` from the archival entry ``label``, keeping
    the entry.

    Raises:
        NotFoundError: No entry ``label`` visible to ``agent``.
        ToolRetry: ``label`` is not archival, or ``target`` exists.
        PermissionDeniedError: ``target`` names another agent's memory.
    """
    _own_label(target, "target_label")
    source = await checked(store.get_block(agent, label))
    if source.kind is not BlockKind.ARCHIVAL:
        raise ToolRetry(
            f"Block {label!r} is in context ({source.kind.value} memory), not archival "
            "memory; only archival entries can be loaded.",
            details={"label": label, "kind": source.kind.value},
        )
    return await copy_entry(
        store,
        agent,
        source,
        target,
        permission=_level(source, agent),
        advice="Choose another target_label, or leave it out to load the entry itself.",
    )


async def copy_entry(
    store: MemoryStore,
    agent: str,
    source: Block,
    target: str,
    *,
    permission: Permission,
    advice: str,
) -> Block:
    """Create ``agent``'s working block ``target`` with ``source``'s text, description,
    limit and tags, and ``permission``; ``source`` is not changed.

    Args:
        store: The memory store.
        agent: The agent whose working memory gets the copy.
        source: The archival entry copied, as read.
        target: The copy's bare label.
        permission: The copy's permission.
        advice: The sentence saying what to do when ``target`` is taken.

    Raises:
        ToolRetry: ``target`` exists.
        PermissionDeniedError: ``target`` names another agent's memory.
    """
    _own_label(target, "target_label")
    try:
        return await checked(
            store.create_block(
                agent,
                target,
                source.value,
                description=source.description,
                kind=BlockKind.WORKING,
                permission=permission,
                char_limit=source.char_limit,
                tags=source.tags,
                metadata={"loaded_from": source.address_for(agent), "loaded_from_id": source.id},
            )
        )
    except AlreadyExistsError as exc:
        raise ToolRetry(
            f"Block {target!r} already exists, so the entry was not loaded under that "
            f"label. {advice}",
            details={"label": source.address_for(agent), "target_label": target},
        ) from exc


async def archive_into(
    store: MemoryStore, agent: str, label: str, target: str, origin: RequestOrigin
) -> tuple[Block, Block]:
    """Write the in-context block ``label`` to the archival entry ``target`` (created,
    or overwritten under the overwrite rule), then remove ``label``.

    Returns:
        ``(removed, entry)``: the block as it was, and the entry as written.

    Raises:
        NotFoundError: No block ``label``.
        ToolRetry: ``label`` is archival already, or ``target`` is in context.
        PermissionDeniedError: Removing ``label`` is not allowed (``admin`` only), or
            the table (or a human) refuses overwriting ``target``; nothing is written.
    """
    source = await checked(store.get_block(agent, label))
    if source.kind is BlockKind.ARCHIVAL:
        raise ToolRetry(
            f"Block {label!r} is already in archival memory; only core and working "
            "blocks can be archived.",
            details={"label": label, "kind": source.kind.value},
        )
    level = _level(source, agent)
    if verdict(Operation.DELETE, level) is not Verdict.ALLOW:
        raise PermissionDeniedError(
            f"archiving {label!r} into {target!r} removes {label!r}, and removing a block "
            f"needs admin, not {level.value!r}. Archive it in place (leave out "
            "target_label) instead.",
            details={"label": label, "operation": "delete", "permission": level.value},
        )
    entry = await _write_entry(store, agent, source, target, origin)
    removed = await checked(
        store.delete_block(agent, label, expected_version=source.version, origin=origin)
    )
    return removed, entry


async def _write_entry(
    store: MemoryStore, agent: str, source: Block, target: str, origin: RequestOrigin
) -> Block:
    try:
        existing = await checked(store.get_block(agent, target))
    except NotFoundError:
        _own_label(target, "target_label")
        return await checked(
            store.create_block(
                agent,
                target,
                source.value,
                description=source.description,
                kind=BlockKind.ARCHIVAL,
                permission=_level(source, agent),
                tags=source.tags,
            )
        )
    if existing.kind is not BlockKind.ARCHIVAL:
        raise ToolRetry(
            f"Block {target!r} is in context ({existing.kind.value} memory), so it cannot "
            "receive an archived block. Choose an archival entry or a new label.",
            details={"target_label": target, "kind": existing.kind.value},
        )
    return await checked(
        store.update_block_text(
            agent, target, source.value, expected_version=existing.version, origin=origin
        )
    )


async def swap_in_steps(
    store: MemoryStore,
    agent: str,
    archive: tuple[str, str | None],
    load: tuple[str, str | None],
    origin: RequestOrigin,
) -> tuple[Block, Block]:
    """Archive ``archive = (label, target)`` and load ``load = (label, target)``, each
    into its target label when one is given and in place otherwise.

    Returns:
        ``(archived, loaded)``: the archival block the text is in now, and the working
        block.

    Raises:
        NotFoundError: A label names no block.
        ToolRetry: A block is on the wrong side, or a target is taken.
        PermissionDeniedError: The table refuses a step (nothing is written).
    """
    (archive_label, archive_target), (load_label, load_target) = archive, load
    if archive_label == load_label:
        raise ToolRetry(
            "swap needs two different blocks: archive_label and load_label are the same.",
            details={"label": archive_label},
        )
    leaving = await checked(store.get_block(agent, archive_label))
    if leaving.kind is BlockKind.ARCHIVAL:
        raise ToolRetry(
            f"Block {archive_label!r} is already in archival memory; only core and working "
            "blocks can be archived.",
            details={"label": archive_label, "kind": leaving.kind.value},
        )
    coming = await checked(store.get_block(agent, load_label))
    if coming.kind is not BlockKind.ARCHIVAL:
        raise ToolRetry(
            f"Block {load_label!r} is already in context ({coming.kind.value} memory); only "
            "archival blocks can be loaded.",
            details={"label": load_label, "kind": coming.kind.value},
        )
    if load_target is not None and load_target != load_label:
        _own_label(load_target, "load_target")
        await _free(store, agent, load_target)
    else:
        _allowed(Operation.KIND_CHANGE, coming, agent)
    if archive_target is None or archive_target == archive_label:
        _allowed(Operation.KIND_CHANGE, leaving, agent)
        archived = await checked(
            store.set_kind(agent, archive_label, BlockKind.ARCHIVAL, origin=origin)
        )
    else:
        _, archived = await archive_into(store, agent, archive_label, archive_target, origin)
    try:
        if load_target is not None and load_target != load_label:
            loaded = await load_copy(store, agent, load_label, load_target)
        else:
            loaded = await checked(
                store.set_kind(agent, load_label, BlockKind.WORKING, origin=origin)
            )
    except SatchelError as exc:  # the first step stays done: say so
        exc.message += (
            f" The archive step is done: {archive_label!r} is archived as "
            f"{archived.address_for(agent)!r}; {load_label!r} was not loaded."
        )
        exc.details["archived"] = archived.address_for(agent)
        exc.args = (exc.message,)
        raise
    return archived, loaded


def _allowed(operation: Operation, block: Block, agent: str) -> None:
    """Refuse now what the table denies, before any step of a swap is written."""
    level = _level(block, agent)
    if verdict(operation, level) is Verdict.DENY:
        raise PermissionDeniedError(
            f"{operation.value} on block {block.label!r} is not allowed at permission "
            f"{level.value!r}; nothing was changed.",
            details={"label": block.label, "operation": operation.value, "permission": level.value},
        )


async def _free(store: MemoryStore, agent: str, label: str) -> None:
    """Refuse a target label that is taken."""
    try:
        await checked(store.get_block(agent, label))
    except NotFoundError:
        return
    raise ToolRetry(
        f"Block {label!r} already exists, so nothing was swapped. Choose another "
        "load_target, or leave it out to load the entry itself.",
        details={"load_target": label},
    )
