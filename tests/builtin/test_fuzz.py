"""Random arguments to every built-in tool: a call never raises and never ends in an
``internal`` error, and the store is intact afterwards (the database passes SQLite's
integrity check, protected blocks are unchanged, every block still reads back)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from satchel.builtin import DiscordEndpoint, WebhookEndpoint
from satchel.memory import BlockKind, Permission

from .conftest import make_kit
from .fake_services import DISCORD_TOKEN, running_services

LABELS = ["persona", "rules", "notes", "old", "bob/secret", "secret", "bob/team", "team"]

weird_text = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30
) | st.sampled_from(["", " ", "a/b", "x" * 300, "persona ", "\x00", "*", 'AND (" NEAR/2'])
some_text = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=30
) | st.sampled_from(["a/b", "x" * 300, "persona ", "\x00", "*", 'AND (" NEAR/2', "Ada"])
labels = st.sampled_from(LABELS) | some_text
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | weird_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(weird_text, inner, max_size=3),
    max_leaves=6,
)
noise = st.dictionaries(weird_text, json_values, max_size=4)


def op(name: str, **fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"operation": st.just(name), **fields})


def mixed(*shaped: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Mostly well-typed calls (which reach the store), some with a wrong or unknown
    field, and some pure noise."""
    good = st.one_of(*shaped)
    broken = st.tuples(good, weird_text, json_values).map(lambda t: {**t[0], t[1]: t[2]})
    return st.one_of(good, good, good, good, good, good, broken, noise)


dates = (
    st.sampled_from(["yesterday", "2026-11-01", "2020", "soon-ish", "", "9999-12-31"]) | weird_text
)

STRATEGIES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "context": mixed(
        op("append", label=labels, content=some_text),
        op(
            "replace",
            label=labels,
            old=weird_text | st.sampled_from(["Ada", "a", "."]),
            new=weird_text,
        ),
        op("set", label=labels, value=some_text),
        op("set", label=labels, value=some_text, description=weird_text),
        op("archive", label=labels),
        op("load", label=labels),
        op("swap", archive_label=labels, load_label=labels),
        op("list"),
    ),
    "recall": mixed(
        op("insert", content=some_text),
        op("insert", content=some_text, label=labels, tags=st.lists(weird_text, max_size=3)),
        op("append", label=labels, content=some_text),
        op("read", label=labels),
        op("delete", label=labels),
    ),
    "search": mixed(
        st.fixed_dictionaries(
            {
                "domain": st.sampled_from(["archival_memory", "conversations", "all"]),
                "query": some_text,
            },
            optional={
                "limit": st.integers(1, 100) | st.integers(-5, 150),
                "filters": st.fixed_dictionaries(
                    {},
                    optional={
                        "role": st.sampled_from(["user", "assistant", "tool"]),
                        "start_time": dates,
                        "end_time": dates,
                        "tags": st.lists(weird_text, max_size=2),
                        "labels": st.lists(labels, max_size=2),
                    },
                ),
            },
        )
    ),
    "send_message": mixed(
        st.fixed_dictionaries(
            {
                "target": st.one_of(
                    st.just({"type": "user"}),
                    st.fixed_dictionaries({"type": st.just("agent"), "id": labels}),
                    st.fixed_dictionaries(
                        {"type": st.just("group"), "name": st.sampled_from(["team", "nope"])}
                    ),
                    st.fixed_dictionaries(
                        {
                            "type": st.just("discord"),
                            "channel_id": st.sampled_from(["1", "429", "404", "../x"]) | some_text,
                        }
                    ),
                    st.fixed_dictionaries(
                        {
                            "type": st.just("webhook"),
                            "url": st.sampled_from(["HOOK/ok", "HOOK/broken", "http://[::1"])
                            | some_text,
                        }
                    ),
                ),
                "content": some_text,
            },
            optional={"metadata": st.dictionaries(weird_text, json_values, max_size=3)},
        )
    ),
}


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
            max_examples=100,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow],
        )
        @given(args=STRATEGIES[tool])
        def call(args: dict[str, Any]) -> None:
            target = args.get("target")
            if isinstance(target, dict) and isinstance(target.get("url"), str):
                target["url"] = target["url"].replace("HOOK", hook)
            result = portal.call(kit.call, tool, args)
            assert result.error is None or result.error.kind != "internal", result.to_text()
            result.to_json()  # every result serialises

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
