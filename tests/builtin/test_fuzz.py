"""Random and hostile arguments to every built-in tool (lone surrogates, huge strings,
deep nesting, thousands of labels): a call never raises, never ends in an ``internal``
error, its result always serialises, and the store is intact afterwards (the database
passes SQLite's integrity check, protected blocks are unchanged, every block still reads
back)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings

from fake_services import DISCORD_TOKEN, running_services
from satchel.builtin import DiscordEndpoint, WebhookEndpoint
from satchel.memory import BlockKind, Permission

from .conftest import make_kit
from .fuzz_strategies import strategies, with_hook

EXAMPLES = int(os.environ.get("SATCHEL_FUZZ_EXAMPLES", "100"))
"""Cases per tool: 100 in CI; ``SATCHEL_FUZZ_EXAMPLES=10000`` for a soak run (or
``bench/fuzz_soak.py``, which also sends them to a real ``satchel serve``)."""
STRATEGIES = strategies(hostile=True)


@pytest.mark.parametrize("tool", list(STRATEGIES))
def test_random_arguments_never_break_a_tool_or_the_store(tool: str, tmp_path: Path) -> None:
    path = tmp_path / "fuzz.db"
    with running_services() as services, start_blocking_portal() as portal:
        kit = portal.call(make_kit, path)
        hook = f"{services.base_url}/hooks"
        kit.router.set_endpoint(
            "discord", DiscordEndpoint(DISCORD_TOKEN, base_url=f"{services.base_url}/api/v10")
        )
        kit.router.set_endpoint("webhook", WebhookEndpoint(allowed_urls=[hook]))
        store = kit.store
        portal.call(lambda: store.create_block("ada", "persona", "I am Ada.", char_limit=500))
        portal.call(
            lambda: store.create_block(
                "ada", "rules", "Never lie.", permission=Permission.READ_ONLY
            )
        )
        portal.call(
            lambda: store.create_block("ada", "old", "An old note.", kind=BlockKind.ARCHIVAL)
        )
        portal.call(lambda: store.create_block("bob", "secret", "Bob's secret."))
        portal.call(lambda: store.create_block("bob", "team", "Team notes."))
        portal.call(lambda: store.share_block("bob", "team", "ada", Permission.READ_ONLY))

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        )
        @given(args=STRATEGIES[tool])
        def call(args: dict[str, Any]) -> None:
            result = portal.call(kit.call, tool, with_hook(args, hook))
            assert result.error is None or result.error.kind != "internal", result.to_text()
            result.to_json()  # every result serialises, whatever the input held
            result.to_text()

        try:
            call()
            rules = portal.call(store.get_block, "ada", "rules")
            secret = portal.call(store.get_block, "bob", "secret")
            team = portal.call(store.get_block, "bob", "team")
            assert (rules.value, rules.version) == ("Never lie.", 1)
            assert (secret.value, secret.version) == ("Bob's secret.", 1)
            assert team.value == "Team notes."
            for block in portal.call(store.list_blocks, "ada"):
                again = portal.call(store.get_block, "ada", block.address_for("ada"))
                assert again.value == block.value
                assert again.chars == len(again.value)
                if block.char_limit is not None:
                    assert again.chars <= block.char_limit
        finally:
            portal.call(store.close)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
