"""``[notify] urls = [...]``: reminders and nudges to any service apprise reaches (ntfy,
Pushover, Gotify, desktop notifications, Matrix, a JSON webhook...), by URL, through
the optional ``apprise`` package (``pip install 'satchel[apprise]'``).

Why apprise here and not elsewhere (the figures are in bench/README.md, "apprise"):
these targets only ever *receive* a notification the person configured, so apprise's
breadth replaces senders satchel would otherwise write by hand. The channels a person
talks to the agent on (Telegram, Discord, email, the inbox) stay satchel's own: they
receive, reply in threads and offer buttons, and ``send_message``'s targets need
allow-lists (a model picks the URL) and receipts, none of which apprise has.

apprise does no retries by default: add ``?retry=2`` to a URL for them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, SecretStr

from satchel._errors import SatchelUsageError
from satchel.channels._inbound import Action, ChannelUnavailableError, SentMessage

if TYPE_CHECKING:
    import apprise

__all__ = ["AppriseNotifier", "NotifyConfig", "apprise_notifier"]

logger = logging.getLogger("satchel.channels.notify")


def _url_shape(value: SecretStr) -> SecretStr:
    if not re.match(r"^[A-Za-z][A-Za-z0-9+.-]{0,30}://\S", value.get_secret_value()):
        raise ValueError("expected an apprise URL like 'ntfy://topic' (scheme://...)")
    return value


class NotifyConfig(BaseModel):
    """The ``[notify]`` section: where else reminders and nudges go.

    Attributes:
        urls: apprise URLs (``ntfy://my-topic``, ``pover://user@token``,
            ``json://host/path``); secrets, since most hold a token (write
            ``${NAME}`` to read one from the environment).
        title: The notifications' title.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    urls: list[Annotated[SecretStr, AfterValidator(_url_shape)]] = Field(
        min_length=1, max_length=100
    )
    title: str = Field(default="satchel", max_length=250)


class AppriseNotifier:
    """Notifies every ``[notify]`` URL through apprise; what
    :func:`~satchel.channels.notify_channels` needs of a channel (``name`` and
    ``notify``).

    Args:
        config: The ``[notify]`` section.

    Raises:
        SatchelUsageError: apprise is not installed, or a URL is not one it knows (the
            URL's position is named, never the URL: it may hold a token).
    """

    def __init__(self, config: NotifyConfig) -> None:
        try:
            import apprise
        except ImportError:
            raise SatchelUsageError(
                "[notify] needs the apprise package: pip install 'satchel[apprise]'."
            ) from None
        self.title = config.title
        self._apprise: apprise.Apprise = apprise.Apprise()
        for number, url in enumerate(config.urls, start=1):
            if not self._apprise.add(url.get_secret_value()):  # pyright: ignore[reportUnknownMemberType]
                raise SatchelUsageError(
                    f"notify.urls: URL {number} is not one apprise can send to (see "
                    "its list of services)."
                )

    @property
    def name(self) -> str:
        """``"notify"``."""
        return "notify"

    async def notify(self, text: str, *, actions: Sequence[Action] = ()) -> SentMessage | None:
        """Send ``text`` to every URL (buttons have no place here: ``actions`` are
        listed under the text by label).

        Raises:
            ChannelUnavailableError: A URL could not be notified.
        """
        body = text
        if actions:
            body += "\n" + " / ".join(action.label for action in actions)
        outcome: Any = await self._apprise.async_notify(body=body, title=self.title)
        if not outcome:
            raise ChannelUnavailableError("apprise could not notify every [notify] URL")
        return None

    async def aclose(self) -> None:
        """Nothing to release: apprise opens a connection per notification."""


def apprise_notifier(config: NotifyConfig) -> AppriseNotifier:
    """The notifier of the ``[notify]`` section ``config``.

    Raises:
        SatchelUsageError: As :class:`AppriseNotifier`.
    """
    return AppriseNotifier(config)
