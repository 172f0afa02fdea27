"""What an approval request's announcement in a chat says: who asks, what for, a
bounded excerpt of the arguments with secrets hidden, the id and how to answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from satchel.channels._consent_text import announcement, answer_buttons, excerpt
from satchel.consent import ApprovalRequest, ConsentScope

NOW = datetime(2026, 11, 27, 18, 0, tzinfo=UTC)


def _tool_request(arguments: dict[str, object]) -> ApprovalRequest:
    return ApprovalRequest(
        id="ap_abc",
        scope=ConsentScope.tool_execution("send_email", arguments, agent="ada"),
        reason=f"Run send_email({arguments!r})",
        origin="telegram:42",
        agent="ada",
        arguments=arguments,
        created_at=NOW,
        expires_at=NOW + timedelta(minutes=5),
    )


def test_secret_looking_arguments_and_url_credentials_are_never_shown() -> None:
    arguments: dict[str, object] = {
        "to": "bob@example.org",
        "password": "hunter2",
        "smtp": {"host": "mail.example.org", "api_key": "sk-123"},
        "server": "https://ada:s3cret@dav.example.org/cal/",
        "author": "Sam",
        "headers": {"Authorization": "Bearer xyz"},
    }
    text = announcement(_tool_request(arguments))

    assert "hunter2" not in text
    assert "sk-123" not in text
    assert "s3cret" not in text
    assert "xyz" not in text
    assert "author='Sam'" in text
    assert "password=[hidden]" in text
    assert "api_key: [hidden]" in text
    assert "server='https://dav.example.org/cal/'" in text
    assert "Approval needed: agent 'ada' wants to run send_email." in text
    assert "Request: ap_abc (expires 18:05 UTC; no answer means no)" in text
    assert "'approve ap_abc'" in text


def test_the_excerpt_is_bounded() -> None:
    shown = excerpt({"body": "x" * 5000, **{f"k{i}": i for i in range(200)}})

    assert len(shown) <= 500
    assert shown.endswith("…")


def test_the_buttons_carry_the_request_id_within_telegrams_64_bytes() -> None:
    approve, deny = answer_buttons("ap_" + "A" * 24)

    assert (approve.label, deny.label) == ("Approve", "Deny")
    assert approve.data == "consent:approve:ap_" + "A" * 24
    assert max(len(approve.data.encode()), len(deny.data.encode())) <= 64
