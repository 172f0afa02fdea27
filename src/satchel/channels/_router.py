"""From a :class:`~satchel.channels.ChannelConfig` to working endpoints and a
:class:`~satchel.channels.MessageRouter`."""

from __future__ import annotations

from satchel.channels._bluesky import BlueskyEndpoint
from satchel.channels._config import ChannelConfig
from satchel.channels._discord import DiscordEndpoint
from satchel.channels._messaging import AgentCallback, Endpoint, MessageRouter, UserCallback
from satchel.channels._webhook import WebhookEndpoint
from satchel.memory import MemoryStore

__all__ = ["channel_endpoints", "channel_router"]


def channel_endpoints(config: ChannelConfig) -> dict[str, Endpoint]:
    """One endpoint per configured channel, each with its own retries and rate limit.

    Example:
        >>> sorted(channel_endpoints(load_channels("channels.toml")))
        ['discord', 'webhook']
    """
    endpoints: dict[str, Endpoint] = {}
    if (discord := config.discord) is not None:
        endpoints["discord"] = DiscordEndpoint(
            discord.token.get_secret_value(),
            base_url=discord.base_url,
            timeout=discord.delivery.timeout,
            allow_mentions=discord.allow_mentions,
            channels=discord.channels,
            delivery=discord.delivery.delivery(),
        )
    if (bluesky := config.bluesky) is not None:
        endpoints["bluesky"] = BlueskyEndpoint(
            bluesky.handle,
            bluesky.app_password.get_secret_value(),
            service=bluesky.service,
            timeout=bluesky.delivery.timeout,
            langs=bluesky.langs,
            delivery=bluesky.delivery.delivery(),
        )
    if (webhook := config.webhook) is not None:
        endpoints["webhook"] = WebhookEndpoint(
            allowed_urls=webhook.allowed_urls,
            headers={k: v.get_secret_value() for k, v in webhook.headers.items()},
            timeout=webhook.delivery.timeout,
            delivery=webhook.delivery.delivery(),
        )
    return endpoints


def channel_router(
    config: ChannelConfig,
    store: MemoryStore,
    *,
    user: UserCallback | None = None,
    agents: AgentCallback | None = None,
) -> MessageRouter:
    """A :class:`~satchel.channels.MessageRouter` on ``store`` with the configured
    channels and groups; ``send_message`` built on it offers exactly those.

    Example:
        >>> router = channel_router(load_channels(), store)
        >>> tools = memory_toolset(store, router=router)
    """
    return MessageRouter(
        store,
        user=user,
        agents=agents,
        endpoints=channel_endpoints(config),
        groups=config.groups,
    )
