"""The ``[inbox]`` section of the channels file: where the local HTTP inbox listens and
who may post to it (the token comes from ``$SATCHEL_INBOX_TOKEN``)."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Final

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

__all__ = ["DEFAULT_INBOX_PORT", "InboxConfig"]

DEFAULT_INBOX_PORT: Final = 8787
"""The port the inbox listens on when the section names none."""

_HOST_NAME: Final = re.compile(
    r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)

Sender = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[^\x00-\x1f\x7f]+$")]


class InboxConfig(BaseModel):
    """The local HTTP inbox: scripts, phone shortcuts and webhooks post messages to the
    agent with a bearer token, and pick up its reminders (see docs/channels.md).

    Attributes:
        token: The bearer token every request must carry (default
            ``$SATCHEL_INBOX_TOKEN``); at least 16 characters.
        host: The address to listen on; loopback unless you mean otherwise.
        port: The port (``0``: any free one, logged at start).
        allowed_senders: The ``sender`` names that may post; ``None``: anyone with the
            token.
        max_wait: The longest ``?wait=`` a request may ask for, in seconds.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    token: SecretStr = Field(min_length=16)
    host: str = Field(default="127.0.0.1", min_length=1, max_length=253)
    port: int = Field(default=DEFAULT_INBOX_PORT, ge=0, le=65_535)
    allowed_senders: list[Sender] | None = None
    max_wait: float = Field(default=120.0, gt=0, le=3_600)

    @field_validator("host")
    @classmethod
    def _host(cls, value: str) -> str:
        try:
            ipaddress.ip_address(value)
        except ValueError:
            if not _HOST_NAME.match(value):
                raise ValueError(f"expected an IP address or a host name, got {value!r}") from None
        return value
