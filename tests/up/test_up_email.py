"""``satchel up`` on email as a real process: new mail from an allowed sender on the
real pymap IMAP server is answered through the real aiosmtpd SMTP server, threaded to
the person's mail; a stranger's mail is never answered."""

from __future__ import annotations

import email
from email.message import EmailMessage
from pathlib import Path

import anyio
import pytest

from agent.fake_openai import FakeOpenAI, serving
from toolkit.mail.conftest import PASSWORD, USER, ImapServer, SmtpServer
from up.test_up_cli import model, start_up, stop

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(300)]

AGENT = "agent@example.org"
ADA = "ada@example.org"
STRANGER = "mallory@example.net"


def _mail(sender: str, body: str, msgid: str) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = AGENT
    msg["Subject"] = "Lunch"
    msg["Message-ID"] = msgid
    msg.set_content(body)
    return msg.as_bytes()


async def test_up_answers_mail_from_the_person_threaded_and_ignores_a_stranger(
    tmp_path: Path, imap_server: ImapServer, smtp_server: SmtpServer
) -> None:
    imap_server.reset()
    channels = tmp_path / "channels.toml"
    channels.write_text(
        "[email]\n"
        f'imap_host = "127.0.0.1"\nimap_port = {imap_server.port}\nimap_tls = "none"\n'
        f'smtp_host = "127.0.0.1"\nsmtp_port = {smtp_server.port}\nsmtp_tls = "none"\n'
        f'smtp_login = false\nusername = "{USER}"\npassword = "{PASSWORD}"\n'
        f'address = "{AGENT}"\nallowed_senders = ["{ADA}"]\npoll_seconds = 1\n'
    )
    with imap_server.client() as client:
        client.append("INBOX", _mail(STRANGER, "let me in", "<s1@example.net>"))
        client.append("INBOX", _mail(ADA, "hello", "<a1@example.org>"))
    log = tmp_path / "up.log"
    with serving(FakeOpenAI(model)) as openai_url:
        process = start_up(tmp_path / "m.db", channels, openai_url, log)
        try:
            with anyio.fail_after(240):
                while not smtp_server.outbox.messages:  # noqa: ASYNC110 (filled by aiosmtpd's thread)
                    await anyio.sleep(0.2)
        finally:
            stop(process, log)
    [(sender, recipients, raw)] = smtp_server.outbox.messages
    reply = email.message_from_bytes(raw)
    assert (sender, recipients) == (AGENT, [ADA])
    assert reply["Subject"] == "Re: Lunch"
    assert reply["In-Reply-To"] == "<a1@example.org>"
    assert "Hello from ada: hello" in reply.get_payload(decode=True).decode()  # type: ignore[union-attr]
    assert "refused a message from mallory@example.net" in log.read_text()
