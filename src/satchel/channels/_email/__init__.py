"""The email inbound channel: IMAP in, SMTP out, threaded (issue 30 item 1)."""

from satchel.channels._email._channel import EmailChannel, email_channel
from satchel.channels._email._config import EmailConfig

__all__ = ["EmailChannel", "EmailConfig", "email_channel"]
