"""``satchel run`` as a real process: against a local server speaking OpenAI's wire
format through the real SDK, and with a scripted model loaded from a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent.fake_openai import FakeOpenAI, completion, free_port, scripted, serving
from satchel.memory import BlockKind, Domain, SQLiteStore

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
APPEND = {"operation": "append", "label": "human", "content": "Likes green tea."}
SEND = {"target": {"type": "user"}, "content": "Noted, green tea."}


def satchel_run(
    db: Path, *args: str, key: str | None = "test-key", extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(extra_env or {})
    if key is not None:
        env["OPENAI_API_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "satchel", "run", "--db", str(db), "--agent", "ada", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


async def test_a_turn_over_the_wire_edits_memory_ends_on_send_message_and_resumes(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    steps: list[dict[str, Any]] = [
        completion(calls=[("context", APPEND)]),
        completion(calls=[("send_message", SEND)]),
        completion("You like green tea."),
    ]
    fake = FakeOpenAI(scripted(steps))
    with serving(fake) as url:
        first = await anyio.to_thread.run_sync(
            lambda: satchel_run(
                db, "--model", "openai:fake-model", "--base-url", url, "I like green tea"
            )
        )
        second = await anyio.to_thread.run_sync(
            lambda: satchel_run(
                db, "--model", "openai:fake-model", "--base-url", url, "--json", "What do I like?"
            )
        )

    assert first.returncode == 0, first.stderr
    assert first.stdout.strip() == "Noted, green tea."
    assert len(fake.requests) == 3  # the memory edit continued the turn; send_message ended it
    record = json.loads(second.stdout)
    assert (record["reply"], record["stop"]) == ("You like green tea.", "reply")
    resumed = [m.get("content") for m in fake.requests[2]["messages"] if m["role"] == "user"]
    assert resumed == ["I like green tea", "What do I like?"]
    async with SQLiteStore(db, embedder=None) as store:
        human = await store.get_block("ada", "human")
        hits = await store.search("ada", "green tea", domains=Domain.CONVERSATIONS, mode="bm25")
    assert human.value.endswith("Likes green tea.")
    assert "I like green tea" in {h.text for h in hits}


async def test_max_calls_stops_a_looping_model_over_the_wire(tmp_path: Path) -> None:
    steps = [completion(calls=[("search", {"query": f"green tea {n}"})]) for n in range(50)]
    fake = FakeOpenAI(scripted(steps))
    with serving(fake) as url:
        done = await anyio.to_thread.run_sync(
            lambda: satchel_run(
                tmp_path / "m.db",
                "--model",
                "openai:m",
                "--base-url",
                url,
                "--max-calls",
                "3",
                "--json",
                "loop",
            )
        )
    record = json.loads(done.stdout)
    ran = [c for c in record["tool_calls"] if c["ok"]]
    assert len(ran) == 3
    assert record["stop"] == "rules"
    assert "tools" not in fake.requests[-1]  # nothing offered once the limit was hit


async def test_a_scripted_model_from_a_file_drives_a_real_process(tmp_path: Path) -> None:
    done = await anyio.to_thread.run_sync(
        lambda: satchel_run(
            tmp_path / "m.db", "--model", f"{HERE / 'scripted_models.py'}:remember", "--json", "hi"
        )
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert [c["name"] for c in record["tool_calls"]] == ["context", "send_message"]
    assert (record["stop"], record["reply"]) == ("terminal", "Noted, green tea.")


@pytest.mark.parametrize(
    ("model", "key", "message"),
    [
        ("gpt-4o", "test-key", "is not a model satchel can run"),
        ("openai:gpt-4o", None, "OPENAI_API_KEY is not set"),
        (f"{HERE / 'scripted_models.py'}:not_a_model", "test-key", "not a Model"),
        (f"{HERE / 'nowhere.py'}:model", "test-key", "there is no file"),
    ],
)
def test_a_bad_model_or_a_missing_key_is_one_line_and_exit_2(
    tmp_path: Path, model: str, key: str | None, message: str
) -> None:
    done = satchel_run(tmp_path / "m.db", "--model", model, "hi", key=key)
    assert done.returncode == 2
    assert message in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_an_unreachable_server_is_one_line_and_exit_2(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    done = satchel_run(tmp_path / "m.db", "--model", "openai:m", "--base-url", url, "hi")
    assert done.returncode == 2
    assert "cannot reach" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


TOY = str(HERE.parent / "mcp" / "servers" / "toy_server.py")


@pytest.mark.parametrize("lazy", [False, True], ids=["direct", "lazy"])
def test_a_mounted_server_s_tools_reach_the_agent_directly_or_behind_meta_tools(
    tmp_path: Path, lazy: bool
) -> None:
    model = "greeter" if lazy else "direct_greeter"
    done = satchel_run(
        tmp_path / "m.db",
        "--model", f"{HERE / 'scripted_models.py'}:{model}",
        "--mount", f"toy={sys.executable} {TOY}",
        *(["--lazy"] if lazy else []),
        "--json", "greet Ada",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    last = record["tool_calls"][-1]
    assert last["ok"] is True, last
    assert "Ada" in json.dumps(last["output"])
    assert record["reply"] == "Greeted."


def test_a_destructive_tool_returns_the_pending_approval(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    done = satchel_run(
        db,
        "--model", f"{HERE / 'scripted_models.py'}:wiper",
        "--tools", f"{HERE / 'chat_tools.py'}:registry",
        "--json", "wipe it",
    )  # fmt: skip
    record = json.loads(done.stdout)
    assert record["stop"] == "needs_approval"
    [approval] = record["pending_approvals"]
    listed = subprocess.run(
        [sys.executable, "-m", "satchel", "approvals", "list", "--db", str(db), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert approval in listed.stdout


async def test_run_serves_a_users_search_in_place_of_the_builtin_with_replace(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    async with await SQLiteStore.open(db, embedder=None) as store:
        await store.create_block("ada", "notes", "Tea at five.")
        await store.create_block("ada", "trip", "Kyoto in April", kind=BlockKind.ARCHIVAL)
    author_tools = HERE.parent / "mcp" / "servers" / "author_tools.py"
    done = await anyio.to_thread.run_sync(
        lambda: satchel_run(
            db,
            "--model",
            f"{HERE / 'scripted_models.py'}:own_searcher",
            "--tools",
            f"{author_tools}:registry",
            "--replace",
            "search",
            "--json",
            "find Kyoto",
        )
    )

    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    [search, note] = record["tool_calls"]
    assert search["output"]["by"] == "user"
    assert "trip" in search["output"]["labels"]  # beside the user's message
    assert note["output"]["value"] == "Tea at five."
    assert note["output"]["origin"] == "agent:ada"
    assert (note["output"]["has_router"], note["output"]["has_broker"]) == (True, True)


async def test_run_with_channels_offers_and_posts_to_the_configured_discord_channel(
    tmp_path: Path,
) -> None:
    from fake_services import DISCORD_TOKEN, running_services

    db = tmp_path / "m.db"
    to_discord = {"target": {"type": "discord", "channel_id": "4242"}, "content": "Posted."}
    fake = FakeOpenAI(scripted([completion(calls=[("send_message", to_discord)])]))
    with running_services() as services, serving(fake) as url:
        channels = tmp_path / "channels.yaml"
        channels.write_text(
            f"discord:\n  base_url: {services.base_url}/api/v10\n  channels: {{team: 4242}}\n",
            encoding="utf-8",
        )
        args = ("--base-url", url, "--channels", str(channels), "Tell the team")
        done = await anyio.to_thread.run_sync(
            lambda: satchel_run(
                db,
                "--model",
                "openai:fake-model",
                *args,
                extra_env={"SATCHEL_DISCORD_TOKEN": DISCORD_TOKEN},
            )
        )

    assert done.returncode == 0, done.stderr
    (send,) = [t for t in fake.requests[0]["tools"] if t["function"]["name"] == "send_message"]
    target = send["function"]["parameters"]["properties"]["target"]
    assert "discord" in json.dumps(target)
    assert "bluesky" not in json.dumps(target)
    (post,) = services.requests
    assert post.path == "/api/v10/channels/4242/messages"
    assert post.body["content"] == "Posted."
    assert post.headers["authorization"] == f"Bot {DISCORD_TOKEN}"


async def test_run_with_no_memory_offers_no_builtin_but_tools_still_reach_memory(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    async with await SQLiteStore.open(db, embedder=None) as store:
        await store.create_block("ada", "notes", "Tea at five.")
    author_tools = HERE.parent / "mcp" / "servers" / "author_tools.py"
    done = await anyio.to_thread.run_sync(
        lambda: satchel_run(
            db,
            "--model",
            f"{HERE / 'scripted_models.py'}:memoryless",
            "--tools",
            f"{author_tools}:registry",
            "--no-memory",
            "--json",
            "hi",
        )
    )

    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    [context, note] = record["tool_calls"]
    assert context["error"]["kind"] == "denied"  # not offered: nothing ran
    assert sorted(context["error"]["details"]["allowed"]) == ["read_note", "search", "stamp_note"]
    assert note["output"]["value"] == "Tea at five."
    assert record["reply"] == "Done."
