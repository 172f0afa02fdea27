"""The toolkit's one configuration: flags over ``SATCHEL_*`` environment variables over
one TOML file over defaults.

Credentials (a CalDAV password, an IMAP or SMTP password) come from here only, never
from a tool's arguments: a model never sees or chooses them.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import platformdirs
from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from satchel._errors import InvalidInputError, SatchelUsageError

__all__ = ["CONFIG_FILE_ENV", "ToolkitConfig", "default_config_file", "default_data_dir"]

CONFIG_FILE_ENV = "SATCHEL_TOOLKIT_CONFIG"
"""The environment variable naming the toolkit's TOML config file."""


def default_data_dir() -> Path:
    """satchel's data dir, where the memory database lives too, e.g.
    ``~/.local/share/satchel``."""
    return Path(platformdirs.user_data_dir("satchel"))


def default_config_file() -> Path:
    """``<user config dir>/satchel/toolkit.toml``, read when it exists."""
    return Path(platformdirs.user_config_dir("satchel")) / "toolkit.toml"


class ToolkitConfig(BaseSettings):
    """Where the productivity toolkit keeps or finds calendars, tasks and mail, and the
    user's time zone.

    Every field can be set from the environment as ``SATCHEL_<FIELD>`` (e.g.
    ``SATCHEL_CALENDAR_URL``, ``SATCHEL_TIMEZONE``) or in a TOML file (see
    :meth:`load`). With nothing set, calendar and tasks live in local ``.ics`` files in
    :attr:`data_dir` and mail in a local Maildir there: no server needed.

    Example:
        >>> config = ToolkitConfig.load(timezone="Europe/Paris")
        >>> config.zone().key
        'Europe/Paris'
    """

    model_config = SettingsConfigDict(env_prefix="SATCHEL_", extra="forbid", frozen=True)

    data_dir: Path = Field(default_factory=default_data_dir)
    """The folder for local calendars, tasks and mail (default: satchel's data dir)."""
    timezone: str | None = None
    """The user's IANA time zone, e.g. ``Europe/Paris``; default: the machine's."""

    calendar_url: str | None = None
    """A CalDAV calendar (or server) URL; unset: the local calendar in :attr:`data_dir`."""
    calendar_username: str | None = None
    calendar_password: SecretStr | None = None
    calendar_name: str | None = None
    """Which calendar on the CalDAV server holds events (default: the first one)."""
    tasks_name: str | None = None
    """Which calendar on the CalDAV server holds tasks (default: :attr:`calendar_name`)."""

    imap_host: str | None = None
    """An IMAP server to read mail from; unset: the local Maildir in :attr:`data_dir`."""
    imap_port: int | None = None
    imap_username: str | None = None
    imap_password: SecretStr | None = None
    imap_ssl: bool = True
    smtp_host: str | None = None
    """An SMTP server to send through; unset: sent mail goes to the local Maildir."""
    smtp_port: int | None = None
    smtp_username: str | None = None
    smtp_password: SecretStr | None = None
    smtp_starttls: bool = True
    mail_from: str | None = None
    """The sender address of sent mail."""

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise InvalidInputError(
                    f"{value!r} is not an IANA time zone (e.g. Europe/Paris, America/New_York)"
                ) from None
        return value

    def zone(self) -> ZoneInfo:
        """The user's time zone: :attr:`timezone`, else the machine's (``tzlocal``),
        else UTC."""
        if self.timezone is not None:
            return ZoneInfo(self.timezone)
        from tzlocal import get_localzone_name

        try:
            name = get_localzone_name()
        except (LookupError, ValueError, OSError):
            name = None
        try:
            return ZoneInfo(name or "UTC")
        except (ZoneInfoNotFoundError, ValueError):
            return ZoneInfo("UTC")

    @classmethod
    def load(cls, file: Path | str | None = None, **flags: Any) -> ToolkitConfig:
        """The configuration from ``flags`` (``None`` values ignored), then the
        environment, then the TOML ``file`` (default: ``$SATCHEL_TOOLKIT_CONFIG``, else
        :func:`default_config_file` when it exists).

        Raises:
            SatchelUsageError: The file is missing (when named), not TOML, or holds an
                unknown key or a bad value.
        """
        named = file if file is not None else os.environ.get(CONFIG_FILE_ENV)
        path = Path(named).expanduser() if named else default_config_file()
        values: dict[str, Any] = {}
        if named or path.exists():
            try:
                values = tomllib.loads(path.read_text(encoding="utf-8"))
            except OSError as exc:
                raise SatchelUsageError(f"Cannot read the toolkit config {path}: {exc}") from exc
            except tomllib.TOMLDecodeError as exc:
                raise SatchelUsageError(f"The toolkit config {path} is not TOML: {exc}") from exc
        try:
            from_env = cls()
            values.update(from_env.model_dump(include=from_env.model_fields_set))
            values.update({k: v for k, v in flags.items() if v is not None})
            return cls(**values)
        except ValueError as exc:  # pydantic's ValidationError
            raise SatchelUsageError(f"Bad toolkit configuration: {exc}") from exc
