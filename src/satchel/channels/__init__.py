"""Channels from configuration: which channels ``send_message`` reaches (Discord,
Bluesky, webhooks), with their secrets, allow-lists, retries and rate limits, and
consent requests announced on the channel they came from; and the inbound channels a
person talks to an agent on (:class:`InboundChannel`; Discord's is
:class:`DiscordChannel`, opened by :func:`discord_channel`).

One :class:`ChannelConfig`, read from a TOML or YAML file by :func:`load_channels`
(``satchel serve --channels FILE``, ``satchel run``/``chat`` too, or
``$SATCHEL_CHANNELS``) with secrets from the environment, serves the CLI and the library
alike: :func:`channel_router` builds the :class:`MessageRouter`, whose
``send_message`` then offers exactly the configured targets, and
:class:`ConsentAnnouncer` tells the human on that channel when an agent asks for
approval. On an inbound channel (``satchel up``), :class:`ChannelConsent` announces the
request in the chat it came from and takes the person's answer there.

Example:
    >>> config = load_channels("channels.toml")
    >>> router = channel_router(config, store)
    >>> tools = memory_toolset(store, router=router)
    >>> async with ConsentAnnouncer(router).announcing(broker):
    ...     ...
"""

import typing

from satchel.channels._announce import ConsentAnnouncer
from satchel.channels._apprise import AppriseNotifier, NotifyConfig, apprise_notifier
from satchel.channels._bluesky import BlueskyEndpoint, grapheme_count
from satchel.channels._config import (
    BlueskyConfig,
    ChannelConfig,
    DeliveryConfig,
    DiscordConfig,
    RateLimitConfig,
    TelegramConfig,
    WebhookConfig,
)
from satchel.channels._consent_answers import ChannelConsent
from satchel.channels._delivery import Delivery, RateLimit
from satchel.channels._discord import DiscordEndpoint
from satchel.channels._discord_inbound import DiscordChannel, MemoryCursorStore, discord_channel
from satchel.channels._email import EmailChannel, EmailConfig, email_channel
from satchel.channels._inbound import (
    Action,
    ChannelUnavailableError,
    CursorStore,
    InboundChannel,
    InboundMessage,
    SentMessage,
)
from satchel.channels._inbox import InboxChannel, inbox_channel
from satchel.channels._inbox_config import InboxConfig
from satchel.channels._load import load_channels, parse_channels
from satchel.channels._messaging import (
    AgentCallback,
    AgentTarget,
    BlueskyTarget,
    DiscordTarget,
    Endpoint,
    GroupTarget,
    MessageRouter,
    OutgoingMessage,
    Receipt,
    SendReport,
    Target,
    UserCallback,
    UserTarget,
    WebhookTarget,
    describe_target,
)
from satchel.channels._notify import DueReminder, Notifiable, notify_channels, reminder_text
from satchel.channels._open_inbound import open_inbound_channels
from satchel.channels._router import channel_endpoints, channel_router
from satchel.channels._webhook import WebhookEndpoint

if typing.TYPE_CHECKING:
    from satchel.channels._telegram import TelegramChannel

__all__ = [
    "Action",
    "AgentCallback",
    "AgentTarget",
    "AppriseNotifier",
    "BlueskyConfig",
    "BlueskyEndpoint",
    "BlueskyTarget",
    "ChannelConfig",
    "ChannelConsent",
    "ChannelUnavailableError",
    "ConsentAnnouncer",
    "CursorStore",
    "Delivery",
    "DeliveryConfig",
    "DiscordChannel",
    "DiscordConfig",
    "DiscordEndpoint",
    "DiscordTarget",
    "DueReminder",
    "EmailChannel",
    "EmailConfig",
    "Endpoint",
    "GroupTarget",
    "InboundChannel",
    "InboundMessage",
    "InboxChannel",
    "InboxConfig",
    "MemoryCursorStore",
    "MessageRouter",
    "Notifiable",
    "NotifyConfig",
    "OutgoingMessage",
    "RateLimit",
    "RateLimitConfig",
    "Receipt",
    "SendReport",
    "SentMessage",
    "Target",
    "TelegramChannel",
    "TelegramConfig",
    "UserCallback",
    "UserTarget",
    "WebhookConfig",
    "WebhookEndpoint",
    "WebhookTarget",
    "apprise_notifier",
    "channel_endpoints",
    "channel_router",
    "describe_target",
    "discord_channel",
    "email_channel",
    "grapheme_count",
    "inbox_channel",
    "load_channels",
    "notify_channels",
    "open_inbound_channels",
    "parse_channels",
    "reminder_text",
]


def __getattr__(name: str) -> object:
    """``TelegramChannel`` on first use: python-telegram-bot loads only then."""
    if name == "TelegramChannel":
        from satchel.channels._telegram import TelegramChannel

        return TelegramChannel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
