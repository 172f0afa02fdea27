"""Messages an agent sends: the targets, the :class:`MessageRouter` that delivers them,
and the :class:`Endpoint` protocol behind which each channel (Discord, Bluesky, a
webhook, your own) plugs in.

Delivery by target:

* ``user``: the message is recorded in the sender's conversation (role ``assistant``)
  and handed to the router's user callback, if any (a chat UI, a terminal).
* ``agent``: it lands in the recipient's conversation (role ``user``, metadata
  ``from: "agent:<sender>"``).
* ``group``: it lands in each member's conversation, as for ``agent`` (the sender is
  skipped); groups are configured on the router.
* ``discord``, ``bluesky``, ``webhook``: the endpoint registered for that type
  delivers it.

Whatever the target, a delivered message is also recorded in the sender's own
conversation (role ``assistant``, metadata ``to: "<target>"``), so its history shows
what it said and to whom.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, Protocol, TypeVar, assert_never, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from satchel._errors import InvalidInputError, ToolFailed, ToolRetry
from satchel.memory import MemoryStore, Message

_T = TypeVar("_T")

__all__ = [
    "AgentCallback",
    "AgentTarget",
    "BlueskyTarget",
    "DiscordTarget",
    "Endpoint",
    "GroupTarget",
    "MessageRouter",
    "OutgoingMessage",
    "Receipt",
    "SendReport",
    "Target",
    "UserCallback",
    "UserTarget",
    "WebhookTarget",
    "describe_target",
]


class _Target(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UserTarget(_Target):
    """The user you are talking with."""

    type: Literal["user"]


class AgentTarget(_Target):
    """Another agent (into its conversation)."""

    type: Literal["agent"]
    id: str = Field(min_length=1, max_length=128, description="The agent's id.")


class GroupTarget(_Target):
    """Every agent of a configured group."""

    type: Literal["group"]
    name: str = Field(min_length=1, max_length=128, description="The group's name.")


class DiscordTarget(_Target):
    """A Discord channel (at most 2000 characters)."""

    type: Literal["discord"]
    channel_id: str = Field(
        min_length=1, max_length=32, description="The channel's numeric id (a snowflake)."
    )


class BlueskyTarget(_Target):
    """A public Bluesky post that mentions this account (at most 300 characters,
    mention included)."""

    type: Literal["bluesky"]
    handle: str = Field(
        min_length=1, max_length=253, description="The account's handle, e.g. alice.bsky.social."
    )


class WebhookTarget(_Target):
    """An HTTP(S) webhook that receives the message as JSON."""

    type: Literal["webhook"]
    url: str = Field(min_length=1, max_length=2000, description="The webhook's URL.")


Target = Annotated[
    UserTarget | AgentTarget | GroupTarget | DiscordTarget | BlueskyTarget | WebhookTarget,
    Field(discriminator="type"),
]
"""Where a message goes, chosen by ``type``."""

TargetModel = UserTarget | AgentTarget | GroupTarget | DiscordTarget | BlueskyTarget | WebhookTarget


def describe_target(target: TargetModel) -> str:
    """A short address for ``target``: ``user``, ``agent:bob``, ``discord:123``, ..."""
    match target:
        case UserTarget():
            return "user"
        case AgentTarget():
            return f"agent:{target.id}"
        case GroupTarget():
            return f"group:{target.name}"
        case DiscordTarget():
            return f"discord:{target.channel_id}"
        case BlueskyTarget():
            return f"bluesky:{target.handle}"
        case WebhookTarget():
            return f"webhook:{target.url}"
        case _:  # pyright: ignore[reportUnnecessaryComparison]
            assert_never(target)


@dataclass(frozen=True, kw_only=True, slots=True)
class OutgoingMessage:
    """One message on its way out, as an endpoint receives it.

    Attributes:
        sender: The agent sending it.
        target: Where it goes.
        content: The text.
        metadata: The sender's metadata (JSON-compatible).
        origin: The channel the sender's turn came from, when known.
        conversation_id: The sender's conversation.
        sent_at: When it was sent (UTC).
    """

    sender: str
    target: TargetModel
    content: str
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    origin: str | None = None
    conversation_id: str = "default"
    sent_at: datetime = field(default_factory=lambda: datetime.now(UTC))


class Receipt(BaseModel):
    """What one delivery produced: where the message went, over which channel, the id
    the receiving side gave it, and how many tries it took."""

    model_config = ConfigDict(frozen=True)

    to: str = Field(description="Where the message went (user, agent:bob, discord:123, ...).")
    id: str | None = Field(
        default=None, description="The id the receiving side gave the message, if any."
    )
    channel: str | None = Field(
        default=None,
        description="The channel it went over: user, agent, discord, bluesky or webhook.",
    )
    attempts: int = Field(default=1, ge=1, description="Tries it took (retries included).")


class SendReport(BaseModel):
    """Every delivery of one send (several for a group)."""

    model_config = ConfigDict(frozen=True)

    target: str = Field(description="The target as addressed.")
    receipts: list[Receipt] = Field(default_factory=list[Receipt])


@runtime_checkable
class Endpoint(Protocol):
    """Delivers messages of one target type to a channel outside satchel.

    Raise :class:`~satchel.ToolRetry` for a problem the sending model can fix (a bad
    channel id, a message too long, a rate limit to wait out) and
    :class:`~satchel.ToolFailed` for one it cannot (bad credentials, the service down).

    Example:
        >>> class Printer:
        ...     async def deliver(self, message: OutgoingMessage) -> Receipt:
        ...         print(message.content)
        ...         return Receipt(to=describe_target(message.target))
    """

    async def deliver(self, message: OutgoingMessage, /) -> Receipt:
        """Deliver ``message``; return what the receiving side said."""
        ...


UserCallback = Callable[[OutgoingMessage], Awaitable[None]]
"""Receives messages for the user (a chat UI, a terminal, a test)."""

AgentCallback = Callable[[str, OutgoingMessage], Awaitable[None]]
"""Told of each message that landed in another agent's conversation, with the
recipient's id (an agent runtime wakes the recipient with it)."""

_LOCAL_TYPES = ("user", "agent", "group")
_NETWORK_TYPES = ("discord", "bluesky", "webhook")


class MessageRouter:
    """Delivers what agents send: to the user, to other agents through the store, to
    groups of agents, and to pluggable :class:`Endpoint`\\ s.

    Args:
        store: Where agent-to-agent messages land and outgoing ones are recorded.
        user: Receives messages sent to the user (after they are recorded).
        agents: Told of each message that landed with another agent (after it is
            recorded in the recipient's conversation).
        endpoints: Endpoints by target type: ``"discord"``, ``"bluesky"``, ``"webhook"``.
        groups: Group name to member agent ids.
        record_outgoing: Record every delivered message in the sender's conversation.

    Example:
        >>> router = MessageRouter(store, groups={"team": ["ada", "bob"]},
        ...                        endpoints={"discord": DiscordEndpoint(token)})
    """

    def __init__(
        self,
        store: MemoryStore,
        *,
        user: UserCallback | None = None,
        agents: AgentCallback | None = None,
        endpoints: Mapping[str, Endpoint] | None = None,
        groups: Mapping[str, Sequence[str]] | None = None,
        record_outgoing: bool = True,
    ) -> None:
        self.store = store
        self.user = user
        self.agents = agents
        self.endpoints: dict[str, Endpoint] = {}
        self.groups: dict[str, tuple[str, ...]] = {}
        self.record_outgoing = record_outgoing
        for kind, endpoint in (endpoints or {}).items():
            self.set_endpoint(kind, endpoint)
        for name, members in (groups or {}).items():
            self.set_group(name, members)

    def set_endpoint(self, kind: str, endpoint: Endpoint) -> None:
        """Deliver targets of type ``kind`` (``discord``, ``bluesky``, ``webhook``)
        through ``endpoint``, replacing any endpoint set before.

        Raises:
            InvalidInputError: ``kind`` is not a channel target type.
        """
        if kind not in _NETWORK_TYPES:
            raise InvalidInputError(f"endpoints serve one of {_NETWORK_TYPES}, not {kind!r}")
        self.endpoints[kind] = endpoint

    @property
    def target_types(self) -> tuple[str, ...]:
        """The target types this router can deliver now: ``user``, ``agent`` and
        ``group``, then each channel with an endpoint."""
        return (*_LOCAL_TYPES, *(kind for kind in _NETWORK_TYPES if kind in self.endpoints))

    def set_group(self, name: str, members: Sequence[str]) -> None:
        """Define (or redefine) the group ``name`` as ``members``."""
        self.groups[name] = tuple(dict.fromkeys(members))

    async def send(self, message: OutgoingMessage) -> SendReport:
        """Deliver ``message`` and record it.

        Raises:
            ToolRetry: An unknown group, an invalid agent id, or what an endpoint says.
            ToolFailed: No endpoint is configured for the target's type.
        """
        target = message.target
        address = describe_target(target)
        match target:
            case UserTarget():
                receipts = [await self._to_user(message)]
            case AgentTarget():
                receipts = [await self._to_agent(message, target.id)]
            case GroupTarget():
                receipts = [
                    await self._to_agent(message, member)
                    for member in self._members(target.name)
                    if member != message.sender
                ]
            case DiscordTarget() | BlueskyTarget() | WebhookTarget():
                endpoint = self.endpoints.get(target.type)
                if endpoint is None:
                    configured = ", ".join(sorted(self.endpoints)) or "none"
                    raise ToolFailed(
                        f"No {target.type} endpoint is configured, so messages cannot go to "
                        f"{target.type}. Channels configured: {configured}. Send to the "
                        "user instead.",
                        details={"target": address},
                    )
                receipts = [await endpoint.deliver(message)]
            case _:  # pyright: ignore[reportUnnecessaryComparison]
                assert_never(target)
        if self.record_outgoing and not isinstance(target, UserTarget):
            await self._record(message, address)
        channel = "agent" if isinstance(target, GroupTarget) else target.type
        receipts = [r if r.channel else r.model_copy(update={"channel": channel}) for r in receipts]
        return SendReport(target=address, receipts=receipts)

    def _members(self, name: str) -> tuple[str, ...]:
        members = self.groups.get(name)
        if members is None:
            known = ", ".join(repr(g) for g in sorted(self.groups)) or "none are configured"
            raise ToolRetry(
                f"There is no group called {name!r}. Groups: {known}.",
                details={"group": name, "groups": sorted(self.groups)},
            )
        return members

    async def _to_user(self, message: OutgoingMessage) -> Receipt:
        recorded = await self._record(message, "user")
        if self.user is not None:
            await self.user(message)
        return Receipt(to="user", id=recorded.id)

    async def _to_agent(self, message: OutgoingMessage, recipient: str) -> Receipt:
        metadata = {**message.metadata, "from": f"agent:{message.sender}"}
        if isinstance(message.target, GroupTarget):
            metadata["group"] = message.target.name
        landed = await _checked(
            self.store.add_message(
                recipient, "user", message.content, created_at=message.sent_at, metadata=metadata
            )
        )
        if self.agents is not None:
            await self.agents(recipient, message)
        return Receipt(to=f"agent:{recipient}", id=landed.id)

    async def _record(self, message: OutgoingMessage, address: str) -> Message:
        return await _checked(
            self.store.add_message(
                message.sender,
                "assistant",
                message.content,
                conversation_id=message.conversation_id,
                created_at=message.sent_at,
                metadata={**message.metadata, "to": address},
            )
        )


async def _checked(call: Awaitable[_T]) -> _T:
    """Await a store call, turning the ``ValueError`` it raises for invalid input into
    :class:`~satchel.ToolRetry` (the model sent something the store cannot take)."""
    try:
        return await call
    except ValueError as exc:
        text = str(exc).rstrip(".")
        raise ToolRetry(f"Invalid arguments: {text}. Fix them and try again.") from exc
