"""Handing one mail to the SMTP server (stdlib :mod:`smtplib`, blocking: the channel runs
it in a worker thread), with the server's failures mapped to satchel's errors."""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage

from satchel._errors import SatchelUsageError
from satchel.channels._email._config import EmailConfig
from satchel.channels._inbound import ChannelUnavailableError

__all__ = ["check_login", "submit"]


def _connect(config: EmailConfig) -> smtplib.SMTP:
    host, port = config.smtp_host, config.smtp_port_or_default
    if config.smtp_tls == "ssl":
        smtp: smtplib.SMTP = smtplib.SMTP_SSL(
            host, port, timeout=config.timeout, context=ssl.create_default_context()
        )
    else:
        smtp = smtplib.SMTP(host, port, timeout=config.timeout)
    try:
        if config.smtp_tls == "starttls":
            smtp.starttls(context=ssl.create_default_context())
        if config.smtp_login:
            smtp.login(config.username, config.password.get_secret_value())
    except BaseException:
        smtp.close()
        raise
    return smtp


def _label(config: EmailConfig) -> str:
    return f"{config.smtp_host}:{config.smtp_port_or_default}"


def submit(config: EmailConfig, message: EmailMessage) -> None:
    """Send ``message`` through the configured SMTP server.

    Raises:
        SatchelUsageError: The server refused the login (the configuration must change).
        ChannelUnavailableError: The server cannot be reached, or refused the mail or
            its recipient; nothing was sent.
    """
    try:
        with _connect(config) as smtp:
            smtp.send_message(message)
    except smtplib.SMTPAuthenticationError as exc:
        raise _login_refused(config) from exc
    except smtplib.SMTPRecipientsRefused as exc:
        raise ChannelUnavailableError(
            f"The SMTP server {_label(config)} refused the recipient "
            f"{', '.join(sorted(exc.recipients))}; nothing was sent."
        ) from exc
    except (OSError, smtplib.SMTPException) as exc:
        raise ChannelUnavailableError(
            f"The SMTP server {_label(config)} could not send the mail "
            f"({type(exc).__name__}: {exc}); nothing was sent."
        ) from exc


def check_login(config: EmailConfig) -> None:
    """Log in to the SMTP server and out again, to find a wrong password at start
    rather than at the first answer.

    Raises:
        SatchelUsageError: The server refused the login.
        OSError, smtplib.SMTPException: The server cannot be reached now.
    """
    try:
        with _connect(config) as smtp:
            smtp.noop()
    except smtplib.SMTPAuthenticationError as exc:
        raise _login_refused(config) from exc


def _login_refused(config: EmailConfig) -> SatchelUsageError:
    return SatchelUsageError(
        f"The SMTP server {_label(config)} refused the login of {config.username!r}: check "
        "email.username and the password (SATCHEL_EMAIL_PASSWORD), or set "
        "email.smtp_login = false for a server that takes mail without one."
    )
