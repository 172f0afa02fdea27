"""User tools for ``--tools`` that use what ``ToolContext`` carries under ``satchel
serve``: the agent's memory (``ctx.memory``, ``ctx.search``), the message router and
the permission broker. ``search`` stands in for the built-in with ``--replace search``."""

from pydantic import BaseModel

from satchel import ToolContext, ToolRegistry, tool
from satchel.consent import ConsentScope


class Note(BaseModel):
    agent: str
    value: str
    origin: str | None
    has_router: bool
    has_broker: bool


class Found(BaseModel):
    by: str
    labels: list[str]
    texts: list[str]


class Stamped(BaseModel):
    status: str
    ticket: str | None = None
    value: str | None = None


@tool(category="notes", actions=["read"])
async def read_note(label: str, ctx: ToolContext) -> Note:
    """Read a block of the calling agent's memory.

    Args:
        label: The block.
    """
    assert ctx.memory is not None
    block = await ctx.memory.get_block(label)
    return Note(
        agent=ctx.memory.agent,
        value=block.value,
        origin=ctx.origin,
        has_router=ctx.router is not None,
        has_broker=ctx.broker is not None,
    )


@tool(category="memory", actions=["read"])
async def search(query: str, ctx: ToolContext) -> Found:
    """Find notes: the user's own search, served instead of the built-in.

    Args:
        query: What to look for.
    """
    hits = await ctx.search(query)
    return Found(by="user", labels=[h.label or "" for h in hits], texts=[h.text for h in hits])


@tool(category="notes", actions=["create"])
async def stamp_note(label: str, ctx: ToolContext, ticket: str | None = None) -> Stamped:
    """Append "stamped" to a block once a human agreed: the first call asks (through
    ``ctx.broker``) and returns the request's id; call again with it as ``ticket``.

    Args:
        label: The block.
        ticket: The id the first call returned, once a human approved it.
    """
    assert ctx.broker is not None
    assert ctx.memory is not None
    scope = ConsentScope.tool_execution("stamp_note", {"label": label}, agent=ctx.agent)
    if ticket is None:
        asked = await ctx.broker.request(
            scope, f"stamp block {label!r}", ctx.origin or "", wait=False
        )
        return Stamped(status=asked.status, ticket=asked.id)
    await ctx.broker.consume(ticket, scope)  # an ApprovalError is a `denied` result
    block = await ctx.memory.append_to_block(label, "stamped")
    return Stamped(status="approved", value=block.value)


registry = ToolRegistry([read_note, search, stamp_note])
