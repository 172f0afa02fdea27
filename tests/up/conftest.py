"""The real mail servers of the mail toolkit's tests, for ``satchel up`` on email."""

from toolkit.mail.conftest import (
    imap_server,  # noqa: F401  (a fixture)
    smtp_server,  # noqa: F401  (a fixture)
)
