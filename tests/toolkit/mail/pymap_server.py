"""Run the real pymap IMAP server (in-memory ``dict`` backend), printing ``READY`` once
it listens, so a test can wait for that line instead of polling the port.

pymap signals readiness through systemd's notify socket only; this wrapper points that
hook at stdout and then runs pymap's own ``main``.

Usage: ``python pymap_server.py --port N dict [--demo-data]``
"""

from __future__ import annotations

import sys

import pymap.main


def _ready() -> None:
    print("READY", flush=True)


if __name__ == "__main__":
    pymap.main.notify_ready = _ready
    sys.argv = ["pymap", *sys.argv[1:]]
    pymap.main.main()
