"""Credentials in URLs are removed from what messages and logs show."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from satchel._redact import redact_urls, strip_userinfo


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://ada:PW@host/dav/", "http://host/dav/"),
        ("https://alice:TOKEN@github.com/acme/app.git", "https://github.com/acme/app.git"),
        ("https://token@example.org", "https://example.org"),
        ("HTTPS://U:P@Example.org:8443/x?y=1#z", "HTTPS://Example.org:8443/x?y=1#z"),
        ("http://a:p@ss@host/", "http://host/"),  # an unescaped @ in the password
        ("http://host/path@version", "http://host/path@version"),  # @ after the authority
        ("git@github.com:acme/app.git", "git@github.com:acme/app.git"),  # no URL: unchanged
        ("http://host/", "http://host/"),
    ],
)
def test_strip_userinfo_removes_only_the_user_and_password(url: str, shown: str) -> None:
    assert strip_userinfo(url) == shown


def test_every_url_in_a_message_loses_its_credentials() -> None:
    text = "GET 'http://ada:PW@host/a' failed; retried https://x:y@other.org/b (2 tries)"
    assert redact_urls(text) == (
        "GET 'http://host/a' failed; retried https://other.org/b (2 tries)"
    )


@given(
    user=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.~%", min_size=1, max_size=20),
    password=st.text(
        alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~%!$&()*+,;=:",
        min_size=8,
        max_size=40,
    ),
    prefix=st.text(max_size=30),
)
def test_no_password_survives_redaction(user: str, password: str, prefix: str) -> None:
    text = f"{prefix} https://{user}:{password}@host.example/path failed"
    assert f"{user}:{password}@" not in redact_urls(text)
    assert "https://host.example/path failed" in redact_urls(text)


def test_an_ssh_login_name_is_kept_but_an_ssh_password_is_not() -> None:
    assert (
        strip_userinfo("ssh://git@github.com/acme/app.git") == "ssh://git@github.com/acme/app.git"
    )
    assert strip_userinfo("ssh://git:pw@github.com/a") == "ssh://github.com/a"
