"""Mail list latency: the same tool calls over a local Maildir and over a real IMAP
server (pymap, in-memory, on localhost), each holding the same N messages.

The baseline is the Maildir backend measured in the same run; IMAP figures are printed
as a ratio to it. pymap runs as a subprocess (the test suite's wrapper script).

    uv run python bench/mail_list.py --messages 5000 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from imapclient import IMAPClient

from satchel.registry import ToolRegistry
from satchel.toolkit.mail import ImapSmtpBackend, MaildirBackend, MailServer, mail_tools_for

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "toolkit" / "mail" / "pymap_server.py"
ME = "me@example.org"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_unread_emails", {"max_results": 10}),
    ("search_emails", {"query": "from:sender7 invoice", "max_results": 10}),
    ("summarize_weekly_emails", {"days": 7, "max_emails": 500}),
]


def _message(i: int, now: datetime) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = f"Sender {i % 50} <sender{i % 50}@example.org>"
    msg["To"] = ME
    msg["Subject"] = f"{'Invoice' if i % 10 == 0 else 'Update'} {i}"
    msg["Date"] = format_datetime(now - timedelta(minutes=30 * i))
    msg["Message-ID"] = f"<m{i}@example.org>"
    msg.set_content(f"Message number {i}.\n" + "Some body text. " * 20)
    return msg


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _registry(backend: Any) -> ToolRegistry:
    registry = ToolRegistry()
    for tool in mail_tools_for(backend):
        registry.register(tool)
    return registry


async def _time(registry: ToolRegistry, name: str, args: dict[str, Any]) -> float:
    start = time.perf_counter()
    result = await registry.call(name, args)
    elapsed = time.perf_counter() - start
    assert result.ok, result.error
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    now = datetime.now(UTC)
    messages = [_message(i, now) for i in range(args.messages)]

    with tempfile.TemporaryDirectory() as tmp:
        maildir = MaildirBackend(Path(tmp) / "mail", address=ME)
        for i, msg in enumerate(messages):
            maildir.add(msg, seen=i % 3 != 0)

        port = _free_port()
        process = subprocess.Popen(
            [sys.executable, str(SERVER), "--port", str(port), "dict"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == "READY"
            with IMAPClient("127.0.0.1", port=port, ssl=False) as client:
                client.login("demouser", "demopass")
                client.create_folder("Sent")
                for i, msg in enumerate(messages):
                    client.append("INBOX", msg.as_bytes(), flags=[] if i % 3 == 0 else [b"\\Seen"])
            imap = ImapSmtpBackend(
                imap=MailServer(
                    host="127.0.0.1",
                    port=port,
                    username="demouser",
                    password="demopass",
                    security="none",
                ),
                smtp=None,
                address=ME,
            )
            backends: dict[str, Callable[[], ToolRegistry]] = {
                "maildir": lambda: _registry(maildir),
                "imap (pymap)": lambda: _registry(imap),
            }
            figures: dict[tuple[str, str], float] = {}
            for name, call_args in CALLS:
                for label, make in backends.items():
                    registry = make()
                    times = [
                        asyncio.run(_time(registry, name, call_args)) for _ in range(args.rounds)
                    ]
                    figures[(name, label)] = statistics.median(times)
        finally:
            process.terminate()
            process.wait(timeout=10)

    print(f"{args.messages} messages, median of {args.rounds} calls each")
    print("| call | maildir ms | imap ms | imap / maildir |")
    print("|---|---|---|---|")
    for name, _ in CALLS:
        base = figures[(name, "maildir")]
        other = figures[(name, "imap (pymap)")]
        print(f"| {name} | {base * 1000:.0f} | {other * 1000:.0f} | {other / base:.2f} |")


if __name__ == "__main__":
    main()
