"""The ``send_message`` tool: the agent speaks to the user, to other agents, or to a
channel, through a :class:`~satchel.builtin.MessageRouter`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import to_json

from satchel._errors import InvalidInputError
from satchel.builtin._messaging import MessageRouter, OutgoingMessage, Receipt, Target
from satchel.tools import Tool, ToolContext

__all__ = ["SendMessageInput", "SendMessageOutput", "SendMessageTool"]


class SendMessageInput(BaseModel):
    """The input of ``send_message``."""

    model_config = ConfigDict(extra="forbid")

    target: Target = Field(
        description="Who receives it: {type: user}, {type: agent, id}, {type: group, name}, "
        "{type: discord, channel_id}, {type: bluesky, handle} or {type: webhook, url}."
    )
    content: str = Field(min_length=1, max_length=100_000, description="The message text.")
    metadata: dict[str, Any] | None = Field(
        default=None, description="Optional JSON data delivered with the message."
    )

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


def _conversation(ctx: ToolContext) -> str:
    value = ctx.extras.get("conversation_id")
    return value if isinstance(value, str) and value else "default"


class SendMessageTool(Tool[SendMessageInput, SendMessageOutput]):
    """The ``send_message`` built-in tool, delivering through a
    :class:`~satchel.builtin.MessageRouter` as ``ctx.agent``.

    The sender's conversation is ``ctx.extras["conversation_id"]`` when set, else
    ``"default"``.

    Args:
        router: Delivers the messages.
    """

    name = "send_message"
    description = (
        "Send a message: to the user you are talking with, to another agent or a group "
        "of agents, or to a channel (a Discord channel, a Bluesky mention, a webhook). "
        "This is how you answer; sending ends your turn, so put everything you want to "
        "say in one message."
    )
    summary = "Send a message to the user, an agent, a group or a channel."
    usage_rule = "When send_message is called, the turn ends."
    category = "messaging"
    actions = ("send",)
    read_only = False
    destructive = False
    idempotent = False
    open_world = True

    def __init__(self, router: MessageRouter) -> None:
        self.router = router

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
