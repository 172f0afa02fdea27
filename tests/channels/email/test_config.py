"""The ``[email]`` section of the channels file: its defaults, the password from the
environment (never shown), and clear errors for what is missing or malformed."""

from __future__ import annotations

import pytest

from satchel import SatchelUsageError
from satchel.channels import EmailChannel, email_channel, parse_channels

SECTION = """
[email]
imap_host = "imap.example.org"
smtp_host = "smtp.example.org"
username = "agent@example.org"
allowed_senders = ["ada@example.org"]
"""


def test_the_email_section_has_safe_defaults_and_the_password_from_the_environment() -> None:
    config = parse_channels(SECTION, environ={"SATCHEL_EMAIL_PASSWORD": "mail-secret"}).email
    assert config is not None
    assert (config.imap_port_or_default, config.imap_tls) == (993, "ssl")
    assert (config.smtp_port_or_default, config.smtp_tls) == (465, "ssl")
    assert config.mailbox == "INBOX"
    assert config.sender == "agent@example.org"
    assert config.notify_address is None
    assert config.password.get_secret_value() == "mail-secret"
    assert "mail-secret" not in repr(config)
    assert isinstance(email_channel(config), EmailChannel)


def test_ports_follow_the_chosen_security() -> None:
    text = SECTION + 'imap_tls = "starttls"\nsmtp_tls = "starttls"\n'
    config = parse_channels(text, environ={"SATCHEL_EMAIL_PASSWORD": "x"}).email
    assert config is not None
    assert (config.imap_port_or_default, config.smtp_port_or_default) == (143, 587)


def test_a_missing_password_names_the_environment_variable() -> None:
    with pytest.raises(SatchelUsageError, match=r"email\.password.*SATCHEL_EMAIL_PASSWORD"):
        parse_channels(SECTION, environ={})


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ('notify_address = "ada"', r"email.notify_address \(line \d+\): 'ada' is not an email"),
        ('allowed_senders = ["ada@example.org", "bob"]', "'bob' is not an email address"),
        ('imap_tls = "tls"', "email.imap_tls"),
        ("poll_seconds = 0", "email.poll_seconds"),
        ("imap_port = 99999", "email.imap_port"),
        ('imap_user = "x"', "email.imap_user.*not a known setting"),
    ],
)
def test_a_bad_setting_is_refused_naming_it(extra: str, problem: str) -> None:
    text = SECTION.replace('allowed_senders = ["ada@example.org"]\n', "") + extra + "\n"
    with pytest.raises(SatchelUsageError, match=problem):
        parse_channels(text, environ={"SATCHEL_EMAIL_PASSWORD": "x"})


def test_a_username_that_is_no_address_needs_the_address_setting() -> None:
    text = SECTION.replace('username = "agent@example.org"', 'username = "agent"')
    with pytest.raises(SatchelUsageError, match="address is required"):
        parse_channels(text, environ={"SATCHEL_EMAIL_PASSWORD": "x"})
    config = parse_channels(
        text + 'address = "agent@example.org"\n', environ={"SATCHEL_EMAIL_PASSWORD": "x"}
    ).email
    assert config is not None
    assert config.sender == "agent@example.org"
