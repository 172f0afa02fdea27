"""The ``send_message`` tool: the agent speaks to the user, to other agents, or to a
channel, through a :class:`~satchel.builtin.MessageRouter`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator, model_validator
from pydantic_core import to_json

from satchel._errors import InvalidInputError, SatchelUsageError
from satchel.builtin._seed_forms import pattern_message
from satchel.channels._discord import DiscordEndpoint
from satchel.channels._messaging import (
    AgentTarget,
    BlueskyTarget,
    DiscordTarget,
    GroupTarget,
    MessageRouter,
    OutgoingMessage,
    Receipt,
    Target,
    UserTarget,
    WebhookTarget,
)
from satchel.tools import Tool, ToolContext

__all__ = ["SendMessageInput", "SendMessageOutput", "SendMessageTool", "send_message_input"]

_TARGETS: dict[str, tuple[type[BaseModel], str]] = {
    "user": (UserTarget, "{type: user}"),
    "agent": (AgentTarget, "{type: agent, id}"),
    "group": (GroupTarget, "{type: group, name}"),
    "discord": (DiscordTarget, "{type: discord, channel_id}"),
    "bluesky": (BlueskyTarget, "{type: bluesky, handle}"),
    "webhook": (WebhookTarget, "{type: webhook, url}"),
}
_CHANNEL_WORDS = {
    "discord": "a Discord channel",
    "bluesky": "a Bluesky mention",
    "webhook": "a webhook",
}


class SendMessageInput(BaseModel):
    """The input of ``send_message``."""

    model_config = ConfigDict(extra="forbid")

    target: Target = Field(
        description="Who receives it: {type: user}, {type: agent, id}, {type: group, name}, "
        "{type: discord, channel_id}, {type: bluesky, handle} or {type: webhook, url}."
    )
    content: str = Field(min_length=1, max_length=100_000, description="The message text.")
    metadata: dict[str, Any] | None = Field(
        default=None, description="Optional JSON data sent with it."
    )

    @model_validator(mode="before")
    @classmethod
    def _pattern_forms(cls, value: Any) -> Any:
        """Pattern's ``{message}`` and ``{type: "User"}`` (see docs/compat.md)."""
        return pattern_message(value)

    @field_validator("metadata")
    @classmethod
    def _encodable(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        """Metadata goes out as UTF-8 JSON (to a channel, into the store): a lone
        surrogate or a non-finite number cannot, so it is refused here, before anything
        is delivered."""
        if value is not None:
            try:
                to_json(value, inf_nan_mode="strings").decode("utf-8")
            except ValueError:  # pydantic-core's serialisation errors are ValueErrors
                raise InvalidInputError(
                    "metadata must be plain JSON whose text is valid UTF-8 (a lone "
                    "surrogate such as \\ud800 cannot be sent)"
                ) from None
        return value


class SendMessageOutput(BaseModel):
    """What ``send_message`` delivered."""

    message: str = Field(description="Where it went; your turn is over.")
    receipts: list[Receipt] = Field(default_factory=list[Receipt], description="One per recipient.")


def _discord_target(channels: Mapping[str, str]) -> type[BaseModel]:
    """A Discord target whose ``channel_id`` is one of the configured channels."""
    ids = tuple(dict.fromkeys(channels.values()))
    listed = ", ".join(f"{cid} ({name})" for name, cid in channels.items())
    choice = cast(Any, Literal).__getitem__(ids)
    return create_model(
        "DiscordTarget",
        __base__=DiscordTarget,
        __doc__=DiscordTarget.__doc__,
        channel_id=(choice, Field(description=f"One of the configured channels: {listed}.")),
    )


def send_message_input(
    target_types: Sequence[str], *, discord_channels: Mapping[str, str] | None = None
) -> type[SendMessageInput]:
    """The input model of ``send_message`` offering only ``target_types`` (and, with
    ``discord_channels``, only those Discord channels), so a model is never offered a
    target that cannot be delivered.

    Raises:
        SatchelUsageError: An unknown target type, or none at all.

    Example:
        >>> schema = send_message_input(["user", "agent", "group"]).model_json_schema()
    """
    unknown = [t for t in target_types if t not in _TARGETS]
    if unknown or not target_types:
        raise SatchelUsageError(
            f"send_message targets are some of {list(_TARGETS)}, not {list(target_types)}"
        )
    kinds = list(dict.fromkeys(target_types))
    models = [_TARGETS[kind][0] for kind in kinds]
    if discord_channels and "discord" in kinds:
        models[kinds.index("discord")] = _discord_target(discord_channels)
    shapes = ", ".join(_TARGETS[kind][1] for kind in kinds)
    union: Any = models[0]
    for model in models[1:]:
        union = union | model
    if len(models) > 1:
        union = Annotated[union, Field(discriminator="type")]
    return create_model(
        "SendMessageInput",
        __base__=SendMessageInput,
        __doc__=SendMessageInput.__doc__,
        target=(union, Field(description=f"Who receives it: {shapes}.")),
    )


def _description(target_types: Sequence[str]) -> str:
    channels = [_CHANNEL_WORDS[t] for t in target_types if t in _CHANNEL_WORDS]
    where = "the user you are talking with, another agent or a group"
    if channels:
        where += f", or a channel ({', '.join(channels)})"
    return (
        f"Send a message to {where}. This is how you answer; it ends your turn, so say "
        "everything in one message."
    )


def _conversation(ctx: ToolContext) -> str:
    value = ctx.extras.get("conversation_id")
    return value if isinstance(value, str) and value else "default"


class SendMessageTool(Tool[SendMessageInput, SendMessageOutput]):
    """The ``send_message`` built-in tool, delivering through a
    :class:`~satchel.builtin.MessageRouter` as ``ctx.agent``.

    The sender's conversation is ``ctx.extras["conversation_id"]`` when set, else
    ``"default"``.

    Its schema offers only the targets it can deliver: by default the router's
    :attr:`~satchel.builtin.MessageRouter.target_types` when the tool is made (user,
    agent, group, and each channel with an endpoint), and only the allowed channels of
    a :class:`~satchel.builtin.DiscordEndpoint` that has a list. Configure the router's
    endpoints first, or name the types in ``targets``.

    Args:
        router: Delivers the messages.
        targets: The target types to offer; the router's by default.
    """

    name = "send_message"
    description = (
        "Send a message to the user you are talking with, another agent or a group, or a "
        "channel (a Discord channel, a Bluesky mention, a webhook). This is how you "
        "answer; it ends your turn, so say everything in one message."
    )
    summary = "Send a message to the user, an agent, a group or a channel."
    usage_rule = "When send_message is called, the turn ends."
    category = "messaging"
    actions = ("send",)
    read_only = False
    destructive = False
    idempotent = False
    open_world = True

    def __init__(self, router: MessageRouter, *, targets: Sequence[str] | None = None) -> None:
        self.router = router
        kinds = tuple(targets) if targets is not None else router.target_types
        discord = router.endpoints.get("discord")
        channels = discord.channels if isinstance(discord, DiscordEndpoint) else None
        self.input_type = send_message_input(kinds, discord_channels=channels)
        self.description = _description(kinds)

    async def execute(self, params: SendMessageInput, ctx: ToolContext) -> SendMessageOutput:
        """Deliver the message as ``ctx.agent``."""
        report = await self.router.send(
            OutgoingMessage(
                sender=ctx.agent,
                target=params.target,
                content=params.content,
                metadata=params.metadata or {},
                origin=ctx.origin,
                conversation_id=_conversation(ctx),
            )
        )
        count = len(report.receipts)
        if count == 0:
            text = f"Nobody received it: {report.target} has no members besides you."
        elif count == 1:
            text = f"Sent to {report.receipts[0].to}. Your turn is over."
        else:
            text = f"Sent to {count} recipients of {report.target}. Your turn is over."
        return SendMessageOutput(message=text, receipts=report.receipts)
