"""An agent file turned into satchel records, checked in full before anything is
written: :func:`plan_import` is pure (no store, no I/O), so a file it refuses leaves
nothing behind.

Blocks keep their label, value, description and limit (as ``char_limit``); a
``read_only`` block is a :attr:`~satchel.memory.Permission.READ_ONLY` block, any other
is ``read_write``. A block several agents list is owned by the first and shared with the
others. Messages become each agent's ``default`` conversation, in the shape satchel's
own agent records (tool calls in ``metadata["tool_calls"]``); what satchel has no field
for is kept under ``metadata["letta"]``. Passages become archival blocks.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, cast

from pydantic import ValidationError

from satchel._errors import InvalidInputError
from satchel.agentfile._profile import PROFILE_LABEL, PROFILE_TAG, AgentProfile
from satchel.agentfile._read import MAX_TEXT_CHARS
from satchel.agentfile._report import (
    AgentFileReport,
    ToolReport,
    server_suggestion,
    tool_name,
    tool_report,
)
from satchel.agentfile._rules import satchel_rule
from satchel.agentfile._schema import (
    LettaAgent,
    LettaAgentFile,
    LettaBlock,
    LettaMessage,
    LettaTool,
)
from satchel.memory import (
    Block,
    BlockKind,
    Message,
    Permission,
    Role,
    check_restorable,
    validate_agent,
)
from satchel.memory._models import validate_label

__all__ = ["ImportPlan", "agent_names", "plan_import"]

_ROLES: Final[dict[str, Role]] = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
    "approval": "assistant",
}
_MESSAGE_FIELDS = ("id", "role", "content", "name", "tool_calls", "tool_call_id", "created_at")
_BLOCK_FIELDS = ("id", "label", "value", "limit", "description", "read_only")
_AGENT_FIELDS = ("id", "name", "system", "block_ids", "tool_ids", "tool_rules", "messages")


@dataclass(kw_only=True)
class ImportPlan:
    """What an import writes, checked: the records, and the report of them."""

    records: list[Block | Message] = field(default_factory=list[Block | Message])
    report: AgentFileReport


def agent_names(document: LettaAgentFile, name: str | None) -> list[str]:
    """The satchel names of the file's agents: the first is ``name`` (or its own
    name), each other is ``FIRST:its name``.

    Raises:
        InvalidInputError: A name is not one satchel allows (no ``/``, ``\\``, control
            characters, ``.`` or ``..``), or two agents would share one.
    """
    if not document.agents:
        raise InvalidInputError("the agent file holds no agents")
    first = name if name is not None else document.agents[0].name
    names = [first] + [f"{first}:{agent.name}" for agent in document.agents[1:]]
    for candidate in names:
        _check_name(candidate)
    if len(set(names)) != len(names):
        raise InvalidInputError("two agents of the file have the same name")
    return names


def _check_name(name: str) -> None:
    if name in (".", "..") or "\\" in name or name.startswith("../"):
        raise InvalidInputError(f"invalid agent name {name[:140]!r}: it reads as a path")
    validate_agent(name)


def plan_import(
    document: LettaAgentFile, names: Sequence[str], *, now: datetime | None = None
) -> ImportPlan:
    """Check ``document`` in full and build the records that import it as the agents
    ``names`` (from :func:`agent_names`).

    Raises:
        InvalidInputError: One line naming what is wrong: a duplicate id or label, an
            id no entry has, a reserved or invalid label, a text over
            :data:`~satchel.agentfile.MAX_TEXT_CHARS`, a value over its limit, an
            unknown role or rule type, a bad tool or server entry.
    """
    try:
        return _plan(document, names, now or datetime.now(UTC))
    except InvalidInputError:
        raise
    except RecursionError:
        raise InvalidInputError("the agent file is nested too deeply") from None
    except ValueError as exc:  # pydantic's "Maximum serialization depth exceeded"
        raise InvalidInputError(f"the agent file is nested too deeply ({exc})") from None


def _plan(document: LettaAgentFile, names: Sequence[str], moment: datetime) -> ImportPlan:
    agents = document.agents
    by_agent = {agent.id: name for agent, name in zip(agents, names, strict=True)}
    _unique("agent", [a.id for a in agents])
    _unique("tool", [t.id for t in document.tools])
    blocks = _all_blocks(document)
    tools = {tool.id: tool for tool in document.tools}
    owners = _owners(document, blocks)
    records: list[Block | Message] = []
    report = _Counts()
    block_records = _blocks(agents, names, blocks, owners, moment)
    records.extend(block_records)
    report.blocks = len(block_records)
    for agent, name in zip(agents, names, strict=True):
        records.extend(_messages(agent, name, moment, report))
    passages = list(_passages(document, by_agent, names[0], moment))
    records.extend(passages)
    report.passages = len(passages)
    _check_labels(records)
    tool_reports: dict[str, ToolReport] = {}
    for tool in document.tools:
        tool_reports[tool.id] = tool_report(tool)
    for i, (agent, name) in enumerate(zip(agents, names, strict=True)):
        records.append(
            _profile_block(document, agent, name, names, i == 0, tools, blocks, moment, report)
        )
    for record in records:
        _restorable(record)
    servers = [server_suggestion(s) for s in document.mcp_servers]
    kept = {
        key: len(value)
        for key, value in (
            ("groups", document.groups),
            ("sources", document.sources),
            ("files", document.files),
        )
        if value
    }
    return ImportPlan(
        records=records,
        report=AgentFileReport(
            agents=list(names),
            blocks=report.blocks,
            passages=report.passages,
            messages=report.messages,
            rules=report.rules,
            kept_rules=report.kept_rules,
            tools=list(tool_reports.values()),
            servers=servers,
            kept=kept,
        ),
    )


@dataclass
class _Counts:
    blocks: int = 0
    passages: int = 0
    messages: int = 0
    rules: int = 0
    kept_rules: int = 0


def _unique(what: str, ids: Iterable[str]) -> None:
    seen: set[str] = set()
    for item in ids:
        if item in seen:
            raise InvalidInputError(f"two {what}s of the file have the id {item[:80]!r}")
        seen.add(item)


def _all_blocks(document: LettaAgentFile) -> dict[str, LettaBlock]:
    """The file's blocks by id, with each agent's inline ``memory_blocks`` among them
    (as ``AGENT_ID/memory_blocks/N``)."""
    out: dict[str, LettaBlock] = {}
    for block in document.blocks:
        if block.id in out:
            raise InvalidInputError(f"two blocks of the file have the id {block.id[:80]!r}")
        out[block.id] = block
    for agent in document.agents:
        for i, inline in enumerate(agent.memory_blocks or ()):
            block_id = f"{agent.id}/memory_blocks/{i}"
            try:
                out[block_id] = LettaBlock.model_validate({**inline, "id": block_id})
            except ValidationError as exc:
                error = exc.errors(include_url=False)[0]
                where = ".".join(str(p) for p in error["loc"])
                raise InvalidInputError(
                    f"agent {agent.name[:60]!r} memory_blocks[{i}].{where}: {error['msg']}"
                ) from None
    return out


def _block_ids(agent: LettaAgent) -> list[str]:
    inline = [f"{agent.id}/memory_blocks/{i}" for i in range(len(agent.memory_blocks or ()))]
    return [*(agent.block_ids or ()), *inline]


def _owners(document: LettaAgentFile, blocks: dict[str, LettaBlock]) -> dict[str, int]:
    """Each block's owner (an index into the agents): the first agent that lists it,
    or the first agent for a block none lists."""
    owners: dict[str, int] = {}
    for i, agent in enumerate(document.agents):
        listed = _block_ids(agent)
        if len(set(listed)) != len(listed):
            raise InvalidInputError(f"agent {agent.name[:60]!r} lists a block twice")
        labels: dict[str, str] = {}
        for block_id in listed:
            block = blocks.get(block_id)
            if block is None:
                raise InvalidInputError(
                    f"agent {agent.name[:60]!r} lists block {block_id[:80]!r}, which the "
                    "file does not hold"
                )
            if block.label in labels:
                raise InvalidInputError(
                    f"agent {agent.name[:60]!r} has two blocks labelled {block.label[:80]!r} "
                    f"({labels[block.label][:40]!r} and {block_id[:40]!r}); labels must differ"
                )
            labels[block.label] = block_id
            owners.setdefault(block_id, i)
    for block_id in blocks:
        owners.setdefault(block_id, 0)
    return owners


def _blocks(
    agents: Sequence[LettaAgent],
    names: Sequence[str],
    blocks: dict[str, LettaBlock],
    owners: dict[str, int],
    moment: datetime,
) -> list[Block]:
    out: list[Block] = []
    for block_id, block in blocks.items():
        owner = owners[block_id]
        where = f"block {block.label[:80]!r} ({block_id[:40]!r})"
        label = _label(block.label, where)
        _text_size(block.value, where)
        if block.limit is not None:
            if block.limit < 0:
                raise InvalidInputError(f"{where} has a negative limit")
            if len(block.value) > block.limit:
                raise InvalidInputError(
                    f"{where} holds {len(block.value):,} characters, over its limit of "
                    f"{block.limit:,}"
                )
        permission = Permission.READ_ONLY if block.read_only else Permission.READ_WRITE
        shares = {
            names[i]: permission
            for i, agent in enumerate(agents)
            if i != owner and block_id in _block_ids(agent)
        }
        letta = block.rest(*_BLOCK_FIELDS)
        tags = _tags(letta.pop("tags", None), where)
        out.append(
            Block(
                id=_new_id(),
                agent=names[owner],
                label=label,
                value=block.value,
                description=block.description or "",
                kind=BlockKind.CORE,
                permission=permission,
                char_limit=block.limit,
                created_at=moment,
                updated_at=moment,
                tags=tags,
                metadata={"letta": letta} if letta else {},
                shares=shares,
            )
        )
    return out


def _tags(value: object, where: str) -> tuple[str, ...]:
    """A block's Letta ``tags`` as satchel's (a list of strings; empty ones dropped)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidInputError(f"{where}: tags must be a list of strings")
    tags: list[str] = []
    for tag in cast(list[object], value):
        if not isinstance(tag, str):
            raise InvalidInputError(f"{where}: tags must be a list of strings")
        if tag and tag not in tags:
            tags.append(tag)
    return tuple(tags)


def _label(label: str, where: str) -> str:
    if label == PROFILE_LABEL:
        raise InvalidInputError(f"{where}: the label {PROFILE_LABEL!r} is satchel's own")
    if label in (".", "..") or "\\" in label:
        raise InvalidInputError(f"{where}: invalid label {label[:80]!r}: it reads as a path")
    try:
        return validate_label(label)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{where}: {exc.message}") from None


def _text_size(text: str, where: str) -> None:
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidInputError(
            f"{where} holds {len(text):,} characters, over the {MAX_TEXT_CHARS:,} an import accepts"
        )


def _check_labels(records: Sequence[Block | Message]) -> None:
    seen: set[tuple[str, str]] = set()
    for record in records:
        if isinstance(record, Block):
            key = (record.agent, record.label)
            if key in seen:
                raise InvalidInputError(
                    f"agent {record.agent[:60]!r} would have two blocks labelled "
                    f"{record.label[:80]!r}; labels must differ"
                )
            seen.add(key)


def _restorable(record: Block | Message) -> None:
    """Refuse, now, what the store would refuse in the transaction: a lone surrogate,
    a NaN in metadata, metadata nested too deeply."""
    try:
        check_restorable(record)
    except ValueError as exc:
        what = f"block {record.label[:80]!r}" if isinstance(record, Block) else "a message"
        raise InvalidInputError(f"{what} of agent {record.agent[:60]!r}: {exc}") from None


def _new_id() -> str:
    return uuid.uuid4().hex


def _utc(moment: datetime | None, default: datetime) -> datetime:
    if moment is None:
        return default
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _messages(agent: LettaAgent, name: str, moment: datetime, counts: _Counts) -> Iterator[Message]:
    _unique(f"message of agent {agent.name[:60]!r}", [m.id for m in agent.messages])
    for position, message in enumerate(agent.messages):
        if position == 0 and message.role == "system":
            continue  # the opening: kept in the profile
        yield _message(message, name, position, moment, agent.name)
        counts.messages += 1


def _message(
    message: LettaMessage, name: str, position: int, moment: datetime, agent: str
) -> Message:
    where = f"message {message.id[:60]!r} of agent {agent[:60]!r}"
    role = _ROLES.get(message.role)
    if role is None:
        raise InvalidInputError(f"{where} has an unknown role {message.role[:40]!r}")
    text, simple = _text(message.content)
    _text_size(text, where)
    metadata: dict[str, Any] = {}
    letta = message.rest(*_MESSAGE_FIELDS)
    letta["position"] = position
    if message.role != role:
        letta["role"] = message.role
    if not simple:
        letta["content"] = message.model_dump(mode="json")["content"]
    if message.tool_calls:
        letta["tool_calls"] = message.model_dump(mode="json")["tool_calls"]
        calls = [_call(call, where) for call in message.tool_calls]
        metadata["tool_calls"] = calls
        if not text:
            text = "; ".join(
                f"{c['name']}({json.dumps(c['arguments'], ensure_ascii=False)[:200]})"
                for c in calls
            )
            metadata["content_from_calls"] = True
    if role == "tool":
        metadata["tool_call_id"] = message.tool_call_id
        metadata["name"] = message.name
    elif message.name is not None:
        letta["name"] = message.name
    metadata["letta"] = letta
    return Message(
        id=_new_id(),
        agent=name,
        conversation_id="default",
        role=role,
        content=text or "(empty)",
        created_at=_utc(message.created_at, moment),
        metadata=metadata,
    )


def _text(content: str | list[dict[str, Any]] | None) -> tuple[str, bool]:
    """The text of a message's content, and whether that text is all of it (plain
    text parts only)."""
    if content is None:
        return "", True
    if isinstance(content, str):
        return content, True
    texts: list[str] = []
    simple = True
    for part in content:
        text: object = part.get("text")
        if part.get("type") == "text" and isinstance(text, str):
            texts.append(text)
            if set(part) - {"type", "text", "signature"} or part.get("signature") is not None:
                simple = False
        else:
            simple = False
    return "\n".join(texts), simple and len(texts) <= 1


def _call(call: dict[str, Any], where: str) -> dict[str, Any]:
    """A Letta (OpenAI) tool call as satchel records one: ``id``, ``name``,
    ``arguments`` (an object)."""
    function: object = call.get("function")
    if not isinstance(function, dict):
        raise InvalidInputError(f"{where} has a tool call without a function")
    fields = cast(dict[str, Any], function)
    name: object = fields.get("name")
    raw: object = fields.get("arguments")
    if not isinstance(name, str):
        raise InvalidInputError(f"{where} has a tool call without a name")
    arguments: object = raw
    if isinstance(raw, str):
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            arguments = {}
    call_id: object = call.get("id")
    return {
        "id": call_id if isinstance(call_id, str) else None,
        "name": name,
        "arguments": arguments if isinstance(arguments, dict) else {},
    }


def _passages(
    document: LettaAgentFile, by_agent: dict[str, str], first: str, moment: datetime
) -> Iterator[Block]:
    _unique("passage", [p.id for p in document.passages if p.id is not None])
    for i, passage in enumerate(document.passages):
        where = f"passage {passage.id or i!r}"
        owner = first if passage.agent_id is None else by_agent.get(passage.agent_id)
        if owner is None:
            raise InvalidInputError(f"{where} names agent {passage.agent_id!r}, not in the file")
        _text_size(passage.text, where)
        label = _label(passage.id or f"passage-{i}", where)
        tags = tuple(dict.fromkeys(t for t in passage.tags or () if t))
        letta = passage.rest("id", "text", "agent_id", "tags", "created_at")
        yield Block(
            id=_new_id(),
            agent=owner,
            label=label,
            value=passage.text,
            kind=BlockKind.ARCHIVAL,
            created_at=_utc(passage.created_at, moment),
            updated_at=_utc(passage.created_at, moment),
            tags=tags,
            metadata={"letta": letta} if letta else {},
        )


def _profile_block(
    document: LettaAgentFile,
    agent: LettaAgent,
    name: str,
    names: Sequence[str],
    first: bool,
    tools: dict[str, LettaTool],
    blocks: dict[str, LettaBlock],
    moment: datetime,
    counts: _Counts,
) -> Block:
    where = f"agent {agent.name[:60]!r}"
    rules = agent.tool_rules or []
    for i, rule in enumerate(rules):
        if satchel_rule(rule, f"{where} tool rule {i}") is None:
            counts.kept_rules += 1
        else:
            counts.rules += 1
    listed: list[dict[str, Any]] = []
    for tool_id in agent.tool_ids or ():
        tool = tools.get(tool_id)
        if tool is None:
            raise InvalidInputError(
                f"{where} lists tool {tool_id[:80]!r}, which the file does not hold"
            )
        tool_name(tool)
        listed.append(tool.model_dump(mode="json"))
    _text_size(agent.system or "", f"{where}'s system prompt")
    opening = None
    if agent.messages and agent.messages[0].role == "system":
        opening = agent.messages[0].model_dump(mode="json")
        _text_size(_text(agent.messages[0].content)[0], f"{where}'s opening message")
    file: dict[str, Any] = {}
    if first:
        file = document.model_dump(
            mode="json", exclude={"agents", "blocks", "tools", "passages"}, exclude_none=True
        )
    profile = AgentProfile(
        letta_id=agent.id,
        name=agent.name,
        system=agent.system or "",
        tool_rules=[r.model_dump(mode="json", exclude_none=True) for r in rules],
        tools=listed,
        agent=agent.rest(*_AGENT_FIELDS, "memory_blocks"),
        opening=opening,
        block_order=[blocks[b].label for b in _block_ids(agent)],
        companions=list(names[1:]) if first else [],
        file=file,
    )
    return Block(
        id=_new_id(),
        agent=name,
        label=PROFILE_LABEL,
        value="",
        description="What the agent file holds beyond blocks and messages (satchel agent export).",
        kind=BlockKind.ARCHIVAL,
        permission=Permission.READ_ONLY,
        created_at=moment,
        updated_at=moment,
        tags=(PROFILE_TAG,),
        metadata=profile.model_dump(mode="json"),
    )
