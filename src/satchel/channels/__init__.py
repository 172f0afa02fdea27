"""Channels from configuration: which channels ``send_message`` reaches (Discord,
Bluesky, webhooks), with their secrets, allow-lists, retries and rate limits, and
consent requests announced on the channel they came from.

One :class:`ChannelConfig`, read from a TOML or YAML file by :func:`load_channels`
(``satchel serve --channels FILE``, ``satchel run``/``chat`` too, or
``$SATCHEL_CHANNELS``) with secrets from the environment, serves the CLI and the library
alike: :func:`channel_router` builds the :class:`MessageRouter`, whose
``send_message`` then offers exactly the configured targets, and
:class:`ConsentAnnouncer` tells the human on that channel when an agent asks for
approval.

Example:
    >>> config = load_channels("channels.toml")
    >>> router = channel_router(config, store)
    >>> tools = memory_toolset(store, router=router)
    >>> async with ConsentAnnouncer(router).announcing(broker):
    ...     ...
"""

from satchel.channels._announce import ConsentAnnouncer
from satchel.channels._bluesky import BlueskyEndpoint, grapheme_count
from satchel.channels._config import (
    BlueskyConfig,
    ChannelConfig,
    DeliveryConfig,
    DiscordConfig,
    RateLimitConfig,
    WebhookConfig,
)
from satchel.channels._delivery import Delivery, RateLimit
from satchel.channels._discord import DiscordEndpoint
from satchel.channels._email import EmailChannel, EmailConfig, email_channel
from satchel.channels._inbound import (
    Action,
    ChannelUnavailableError,
    CursorStore,
    InboundChannel,
    InboundMessage,
    SentMessage,
)
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
from satchel.channels._router import channel_endpoints, channel_router
from satchel.channels._webhook import WebhookEndpoint

__all__ = [
    "Action",
    "AgentCallback",
    "AgentTarget",
    "BlueskyConfig",
    "BlueskyEndpoint",
    "BlueskyTarget",
    "ChannelConfig",
    "ChannelUnavailableError",
    "ConsentAnnouncer",
    "CursorStore",
    "Delivery",
    "DeliveryConfig",
    "DiscordConfig",
    "DiscordEndpoint",
    "DiscordTarget",
    "EmailChannel",
    "EmailConfig",
    "Endpoint",
    "GroupTarget",
    "InboundChannel",
    "InboundMessage",
    "MessageRouter",
    "OutgoingMessage",
    "RateLimit",
    "RateLimitConfig",
    "Receipt",
    "SendReport",
    "SentMessage",
    "Target",
    "UserCallback",
    "UserTarget",
    "WebhookConfig",
    "WebhookEndpoint",
    "WebhookTarget",
    "channel_endpoints",
    "channel_router",
    "describe_target",
    "email_channel",
    "grapheme_count",
    "load_channels",
    "parse_channels",
]
