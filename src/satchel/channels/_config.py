"""The channels configuration: which channels ``send_message`` can reach, with their
credentials, allow-lists, retries and rate limits.

One file (TOML, or YAML by its ``.yaml``/``.yml`` suffix) names the channels; the
environment holds the secrets. A section present in the file is a configured channel;
a secret it leaves out is read from the environment (``SATCHEL_DISCORD_TOKEN``,
``SATCHEL_BLUESKY_HANDLE``, ``SATCHEL_BLUESKY_APP_PASSWORD``), and any string
``${NAME}`` is replaced by the environment variable ``NAME``. Secrets are
:class:`~pydantic.SecretStr`: they print as ``**********`` and never reach a tool's
arguments, results or logs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Final

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from satchel.channels._apprise import NotifyConfig
from satchel.channels._bluesky import BLUESKY_SERVICE
from satchel.channels._delivery import Delivery, RateLimit
from satchel.channels._discord import DISCORD_API
from satchel.channels._inbox_config import InboxConfig

if TYPE_CHECKING:  # python-telegram-bot loads only when a Telegram channel is made
    from satchel.channels._telegram import TelegramChannel
from satchel.channels._email import EmailConfig

__all__ = [
    "ENV_SECRETS",
    "BlueskyConfig",
    "ChannelConfig",
    "DeliveryConfig",
    "DiscordConfig",
    "RateLimitConfig",
    "TelegramConfig",
    "WebhookConfig",
]

ENV_SECRETS: Final[Mapping[tuple[str, str], str]] = {
    ("discord", "token"): "SATCHEL_DISCORD_TOKEN",
    ("bluesky", "handle"): "SATCHEL_BLUESKY_HANDLE",
    ("bluesky", "app_password"): "SATCHEL_BLUESKY_APP_PASSWORD",
    ("inbox", "token"): "SATCHEL_INBOX_TOKEN",
    ("telegram", "token"): "SATCHEL_TELEGRAM_TOKEN",
    ("email", "password"): "SATCHEL_EMAIL_PASSWORD",
}
"""The environment variable that fills each secret a section leaves out."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_SNOWFLAKE = re.compile(r"^[0-9]{1,20}$")


def _http_url(value: str) -> str:
    if not re.match(r"^https?://[^/\s?#]+(?:[/?#]\S*)?$", value):
        # the value is not quoted: it may have come from ${NAME}, a secret
        raise ValueError("expected an http:// or https:// URL")
    return value


def _snowflake(value: Any) -> Any:
    """A Discord id: TOML and YAML may write it as a number, taken as its digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not _SNOWFLAKE.match(value):
        # the value is not quoted: it may have come from ${NAME}, a secret
        raise ValueError('expected a Discord channel id (digits, like "1234567890123456789")')
    return value


def _user_id(value: Any) -> Any:
    """A Discord user id, written as a number or as its digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not _SNOWFLAKE.match(value):
        raise ValueError(
            f'expected a Discord user id (digits, like "123456789012345678"), got '
            f"{str(value)[:40]!r}"
        )
    return value


HttpUrl = Annotated[str, Field(max_length=2000), AfterValidator(_http_url)]
Snowflake = Annotated[str, BeforeValidator(_snowflake)]
UserId = Annotated[str, BeforeValidator(_user_id)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RateLimitConfig(_Section):
    """At most ``requests`` messages every ``per`` seconds, per channel."""

    requests: int = Field(ge=1, le=10_000)
    per: float = Field(gt=0, le=86_400)


class DeliveryConfig(_Section):
    """Retries and rate limit of one channel's deliveries (see
    :class:`~satchel.channels.Delivery`)."""

    attempts: int = Field(default=3, ge=1, le=10, description="Tries per request in all.")
    backoff: float = Field(default=0.5, ge=0, le=60, description="Seconds before a first retry.")
    max_wait: float = Field(
        default=10.0, ge=0, le=600, description="The longest wait for a Retry-After or the limit."
    )
    timeout: float = Field(default=10.0, gt=0, le=600, description="Seconds to wait for an answer.")
    rate: RateLimitConfig | None = None

    def delivery(self) -> Delivery:
        """A fresh :class:`~satchel.channels.Delivery` (one per endpoint: the rate limit
        counts per endpoint)."""
        rate = self.rate
        return Delivery(
            attempts=self.attempts,
            backoff=self.backoff,
            max_wait=self.max_wait,
            rate=None if rate is None else RateLimit(requests=rate.requests, per=rate.per),
        )


class DiscordConfig(_Section):
    """A Discord bot and the channels it may post to.

    Attributes:
        token: The bot token (default ``$SATCHEL_DISCORD_TOKEN``).
        channels: The allowed channels, a name for each channel id; ``send_message``
            offers exactly these.
        base_url: The REST API's base URL.
        allow_mentions: Let ``@`` mentions in messages notify people.
        delivery: Retries and rate limit (default: 5 messages every 5 seconds).
        listen: For ``satchel up``: the channels (names from :attr:`channels`) whose
            messages reach the agent.
        allowed_users: For ``satchel up``: the user ids whose messages reach the agent.
        dm: For ``satchel up``: read direct messages from :attr:`allowed_users` too.
        notify_channel: Where reminders, nudges and consent requests go (a name from
            :attr:`channels`); else :attr:`notify_user`.
        notify_user: The user id reminders go to by direct message, without a
            :attr:`notify_channel`.
        poll_seconds: Seconds between two reads of each channel.
    """

    token: SecretStr = Field(min_length=1)
    channels: dict[str, Snowflake] = Field(min_length=1)
    base_url: HttpUrl = DISCORD_API
    allow_mentions: bool = False
    delivery: DeliveryConfig = DeliveryConfig(rate=RateLimitConfig(requests=5, per=5.0))
    listen: list[str] = []
    allowed_users: list[UserId] = []
    dm: bool = True
    notify_channel: str | None = None
    notify_user: UserId | None = None
    poll_seconds: float = Field(default=2.0, ge=0.5, le=300)

    @model_validator(mode="after")
    def _inbound_names(self) -> DiscordConfig:
        named = [*self.listen, *([self.notify_channel] if self.notify_channel else [])]
        for name in named:
            if name not in self.channels:
                known = ", ".join(self.channels)
                raise ValueError(f"{name[:100]!r} is not one of the channels ({known})")
        return self

    @field_validator("channels")
    @classmethod
    def _names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not _NAME.match(name):
                raise ValueError(
                    f"channel name {name[:100]!r} must be letters, digits, '_', '.' or '-' "
                    "(at most 100)"
                )
        return value


class BlueskyConfig(_Section):
    """The Bluesky account that posts (mentions of the target handle).

    Attributes:
        handle: The account's handle or DID (default ``$SATCHEL_BLUESKY_HANDLE``).
        app_password: An app password of it (default ``$SATCHEL_BLUESKY_APP_PASSWORD``).
        service: Its PDS.
        langs: Languages to tag posts with.
        delivery: Retries and rate limit.
    """

    handle: str = Field(min_length=3, max_length=253, pattern=r"^[A-Za-z0-9:._-]+$")
    app_password: SecretStr = Field(min_length=1)
    service: HttpUrl = BLUESKY_SERVICE
    langs: list[Annotated[str, Field(pattern=r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")]] = []
    delivery: DeliveryConfig = DeliveryConfig()


class WebhookConfig(_Section):
    """Webhooks: the URL prefixes messages may go to, and headers sent with each.

    Attributes:
        allowed_urls: URL prefixes a ``{type: webhook, url}`` target must fall under.
        headers: Extra headers (an ``Authorization`` for the hook); secrets.
        delivery: Retries and rate limit.
    """

    allowed_urls: list[HttpUrl] = Field(min_length=1)
    headers: dict[str, SecretStr] = {}
    delivery: DeliveryConfig = DeliveryConfig()

    @field_validator("headers")
    @classmethod
    def _header_names(cls, value: dict[str, SecretStr]) -> dict[str, SecretStr]:
        for name in value:
            if not re.match(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$", name):
                raise ValueError(f"{name[:100]!r} is not an HTTP header name")
        return value


class TelegramConfig(_Section):
    """A Telegram bot the person talks to the agent through (``satchel up``).

    Attributes:
        token: The bot token (default ``$SATCHEL_TELEGRAM_TOKEN``).
        base_url: A Bot API server (``/bot<token>/<method>`` follows it).
        allowed_users: Telegram user ids that may talk to the agent; anyone else's
            message is refused, logged, and never reaches the model.
        notify_chat: Where reminders, nudges and consent requests go.
        poll_seconds: How long one ``getUpdates`` long poll waits.
    """

    token: SecretStr = Field(min_length=1)
    base_url: HttpUrl = "https://api.telegram.org"
    allowed_users: list[int] = []
    notify_chat: int | None = None
    poll_seconds: int = Field(default=25, ge=0, le=50)

    def channel(self) -> TelegramChannel:
        """The :class:`~satchel.channels.TelegramChannel` this section configures."""
        from satchel.channels._telegram import TelegramChannel

        return TelegramChannel(
            self.token.get_secret_value(),
            base_url=self.base_url,
            allowed_users=self.allowed_users,
            notify_chat=self.notify_chat,
            poll_seconds=self.poll_seconds,
        )


class ChannelConfig(_Section):
    """Every channel ``send_message`` can reach beyond the user and other agents, for
    ``satchel serve``, ``satchel run``/``chat`` and the library alike.

    Load it with :func:`~satchel.channels.load_channels`; build the router with
    :meth:`router`. Empty (the default), ``send_message`` offers ``user``, ``agent``
    and ``group`` only.

    Attributes:
        discord: The Discord bot, if any.
        bluesky: The Bluesky account, if any.
        webhook: The allowed webhooks, if any.
        inbox: The local HTTP inbox (an inbound channel), if any.
        notify: apprise URLs reminders and nudges also go to, if any.
        telegram: The Telegram bot ``satchel up`` listens on, if any.
        email: The mailbox a person writes to the agent at, if any (an inbound channel
            of ``satchel up``; see :func:`~satchel.channels.email_channel`).
        groups: Group name to member agent ids.
        announce_consent: Announce an approval request on the channel it came from.

    Example:
        >>> config = ChannelConfig.model_validate(
        ...     {"discord": {"token": "...", "channels": {"general": "1234567890"}}})
        >>> config.target_types()
        ('user', 'agent', 'group', 'discord')
    """

    discord: DiscordConfig | None = None
    bluesky: BlueskyConfig | None = None
    webhook: WebhookConfig | None = None
    inbox: InboxConfig | None = None
    notify: NotifyConfig | None = None
    telegram: TelegramConfig | None = None
    email: EmailConfig | None = None
    groups: dict[str, list[Annotated[str, Field(min_length=1, max_length=128)]]] = {}
    announce_consent: bool = True

    @field_validator("groups")
    @classmethod
    def _group_names(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for name in value:
            if not 0 < len(name) <= 128:
                raise ValueError("a group name has 1 to 128 characters")
        return value

    def target_types(self) -> tuple[str, ...]:
        """What ``send_message`` offers with this configuration."""
        channels = (k for k in ("discord", "bluesky", "webhook") if getattr(self, k) is not None)
        return ("user", "agent", "group", *channels)
