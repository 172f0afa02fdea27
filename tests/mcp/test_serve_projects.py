"""``satchel serve --agent auto``: per-project memory from the client's workspace roots,
through a real server process and the official SDK client announcing roots."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client import ClientRequestContext

from satchel.memory import SQLiteStore, project_for_root

from .conftest import STARTUP, satchel_stdio

pytestmark = pytest.mark.anyio


def _repo(path: Path, remote: str | None) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if remote is not None:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


def _roots(current: list[Path]) -> Callable[..., Any]:
    async def callback(_context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root(uri=p.as_uri(), name=p.name) for p in current]  # type: ignore[arg-type]
        )

    return callback


@asynccontextmanager
async def serving(db: Path, roots: list[Path] | None, *extra: str) -> AsyncGenerator[Client]:
    params = satchel_stdio("--db", str(db), "--agent", "auto", *extra)
    if roots is None:
        async with Client(params, mode="legacy") as client:
            yield client
    else:
        async with Client(params, mode="legacy", list_roots_callback=_roots(roots)) as client:
            yield client


def _ok(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is not True, result.content
    assert result.structured_content is not None
    return result.structured_content


async def _append(client: Client, label: str, text: str) -> dict[str, Any]:
    return _ok(
        await client.call_tool("context", {"operation": "append", "label": label, "content": text})
    )


async def _blocks(client: Client) -> dict[str, dict[str, Any]]:
    listed = _ok(await client.call_tool("context", {"operation": "list"}))
    return {b["label"]: b for b in listed["blocks"]}


async def test_two_roots_get_their_own_project_memory_and_share_the_human_block(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    app = _repo(tmp_path / "app", "git@github.com:Acme/App.git")
    notes = _repo(tmp_path / "notes", None)
    with anyio.fail_after(STARTUP * 4 + 60):
        async with serving(db, None) as client:  # the person's own memory (no roots)
            _ok(
                await client.call_tool(
                    "recall",
                    {"operation": "insert", "label": "dentist", "content": "Dr Lee, Tuesdays."},
                )
            )
        async with serving(db, [app]) as client:
            instructions = client.instructions
            await _append(client, "project", "Builds with `make`.")
            await _append(client, "human", "Prefers tabs.")
            in_app = await _blocks(client)
        async with serving(db, [notes]) as client:
            await _append(client, "project", "Plain Markdown, no build.")
            in_notes = await _blocks(client)
            found = _ok(await client.call_tool("search", {"query": "dentist Lee"}))
        async with serving(db, [app / "sub-folder-not-there"]) as client:  # same repo
            again = await _blocks(client)

    app_agent = project_for_root(app.as_uri()).agent
    assert app_agent == "project:github.com:acme:app"
    assert "Builds with `make`." in in_app["project"]["value"]
    assert "Plain Markdown" in in_notes["project"]["value"]
    assert "make" not in in_notes["project"]["value"]  # each project keeps its own
    # the person's own block, in every project (listed as owner/label)
    assert "Prefers tabs." in in_notes["default/human"]["value"]
    assert in_notes["default/human"]["shared_from"] == "default"
    assert "Builds with `make`." in again["project"]["value"]
    assert instructions is not None
    assert "Memory is per project" in instructions
    # search covers the project's memory and the person's, saying whose each hit is
    # (labelled as the project names it, so recall read opens it)
    assert [(h["label"], h["shared_from"]) for h in found["results"]][:1] == [
        ("default/dentist", "default")
    ]

    store = SQLiteStore(db)
    try:
        agents = {a.name: a for a in await store.describe_agents()}
        human = await store.get_block("default", "human")
        app_project = await store.get_block(app_agent, "project")
    finally:
        await store.close()
    assert {"default", app_agent, project_for_root(notes.as_uri()).agent} <= set(agents)
    assert agents[app_agent].template == "project"
    assert human.value.startswith("Prefers tabs.")  # written once, where it belongs
    assert app_project.metadata["project"] == "github.com/acme/app"
    assert app_project.metadata["root"] == app.as_uri()


async def test_without_roots_the_person_s_own_memory_is_used(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with anyio.fail_after(STARTUP + 30):
        async with serving(db, None) as client:
            await _append(client, "human", "Name: Ada.")
            blocks = await _blocks(client)
    assert set(blocks) == {"persona", "human"}  # no project block: the default agent
    store = SQLiteStore(db)
    try:
        assert (await store.get_block("default", "human")).value == "Name: Ada."
        assert [a.name for a in await store.describe_agents()] == ["default"]
    finally:
        await store.close()


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_a_roots_change_moves_the_session_to_the_new_project(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    first = _repo(tmp_path / "first", "https://git.example.org/team/first.git")
    second = _repo(tmp_path / "second", "https://git.example.org/team/second")
    current = [first]
    with anyio.fail_after(STARTUP + 60):
        async with serving(db, current) as client:
            await _append(client, "project", "First project.")
            current[:] = [second]
            await client.send_roots_list_changed()  # pyright: ignore[reportDeprecated]
            for _ in range(100):  # the notification is handled asynchronously
                blocks = await _blocks(client)
                if "First project." not in blocks["project"]["value"]:
                    break
                await anyio.sleep(0.05)
            await _append(client, "project", "Second project.")
            final = await _blocks(client)
    assert "First project." not in final["project"]["value"]
    assert "Second project." in final["project"]["value"]
    assert "git.example.org/team/second" in final["project"]["value"]


async def test_global_labels_and_tags_choose_what_every_project_shares(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    store = SQLiteStore(db)
    try:
        await store.ensure_agent("default")
        await store.create_block("default", "style", "Short answers.", tags=["global"])
        await store.create_block("default", "diary", "Private.")
    finally:
        await store.close()
    app = _repo(tmp_path / "app", None)
    with anyio.fail_after(STARTUP + 30):
        async with serving(db, [app], "--global", "human") as client:
            blocks = await _blocks(client)
    assert {"project", "default/human", "default/style", "persona"} <= set(blocks)
    assert "default/diary" not in blocks
    assert blocks["persona"]["shared_from"] is None  # not global here: the project's own


# -- serve --mirror ------------------------------------------------------------------


async def _until(check: Callable[[], bool]) -> None:
    """Wait until a file shows what the server wrote (a poll interval at most)."""
    for _ in range(400):
        if check():
            return
        await anyio.sleep(0.05)
    raise AssertionError("the mirror did not write the change out")


async def test_a_mirror_folder_follows_the_model_and_the_model_sees_hand_edits(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    folder = tmp_path / "memory"
    human = folder / "blocks" / "human.md"
    params = satchel_stdio("--db", str(db), "--mirror", str(folder))
    with anyio.fail_after(STARTUP + 60):
        async with Client(params, mode="legacy") as client:
            await _append(client, "human", "Name: Ada.")
            await _until(lambda: human.is_file() and "Name: Ada." in human.read_text())
            text = human.read_text()
            human.write_text(text.replace("Name: Ada.", "Name: Ada Lovelace."), encoding="utf-8")
            for _ in range(400):  # the edit is read in within moments
                seen = (await _blocks(client))["human"]["value"]
                if "Lovelace" in seen:
                    break
                await anyio.sleep(0.05)
    assert seen == "Name: Ada Lovelace."
    assert (folder / "index.md").is_file()


async def test_per_project_mirrors_get_a_folder_each(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    folder = tmp_path / "memory"
    app = _repo(tmp_path / "app", "git@github.com:acme/app.git")
    with anyio.fail_after(STARTUP + 60):
        async with serving(db, [app], "--mirror", str(folder)) as client:
            await _append(client, "project", "Uses uv.")
            mine = folder / "project-github.com-acme-app" / "blocks" / "project.md"
            await _until(lambda: mine.is_file() and "Uses uv." in mine.read_text())
    assert (folder / "default" / "blocks" / "human.md").is_file()


async def test_project_root_serves_a_client_that_gives_no_roots_and_roots_win(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    app = _repo(tmp_path / "app", "https://github.com/acme/app.git")
    other = _repo(tmp_path / "other", None)
    with anyio.fail_after(STARTUP * 3 + 60):
        async with serving(db, None, "--project-root", str(app)) as client:  # no roots
            await _append(client, "project", "Deploys on Fridays.")
            no_roots = await _blocks(client)
        async with serving(db, [other], "--project-root", str(app)) as client:
            with_roots = await _blocks(client)
        async with serving(db, None, "--project-root", "${workspaceFolder}") as client:
            unexpanded = await _blocks(client)

    assert "Deploys on Fridays." in no_roots["project"]["value"]
    assert "github.com/acme/app" in no_roots["project"]["value"]
    assert "Deploys on Fridays." not in with_roots["project"]["value"]
    assert "project" not in unexpanded  # the person's own memory, not a project
    assert "human" in unexpanded


async def test_project_root_without_agent_auto_is_one_line_and_exit_2(tmp_path: Path) -> None:
    from .conftest import satchel_args

    args = satchel_args("--db", str(tmp_path / "m.db"), "--project-root", str(tmp_path))
    with anyio.fail_after(STARTUP):
        done = await anyio.run_process(args, check=False, input=b"")
    message = done.stderr.decode()
    assert done.returncode == 2
    assert "--project-root" in message
    assert "only makes sense with --agent auto" in message
    assert "Traceback" not in message


async def test_recall_read_opens_every_archival_hit_search_shows_in_a_project(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    app = _repo(tmp_path / "app", "https://github.com/acme/app.git")
    other = _repo(tmp_path / "other", "https://github.com/acme/other.git")
    app_agent = project_for_root(app.as_uri()).agent
    other_agent = project_for_root(other.as_uri()).agent
    with anyio.fail_after(STARTUP * 3 + 60):
        async with serving(db, None) as client:  # the person's own memory
            _ok(
                await client.call_tool(
                    "recall",
                    {"operation": "insert", "label": "dentist", "content": "Dr Lee, Tuesdays."},
                )
            )
        async with serving(db, None, "--project-root", str(other)) as client:
            _ok(
                await client.call_tool(
                    "recall",
                    {
                        "operation": "insert",
                        "label": "deploy-key",
                        "content": "The other project's dentist deploy key.",
                    },
                )
            )
        async with serving(db, None, "--project-root", str(app)) as client:
            _ok(
                await client.call_tool(
                    "recall",
                    {
                        "operation": "insert",
                        "label": "dentist",
                        "content": "The app's dentist booking module.",
                    },
                )
            )
            found = _ok(
                await client.call_tool("search", {"query": "dentist", "domain": "archival_memory"})
            )
            shown = [(h["label"], h["shared_from"], h["text"]) for h in found["results"]]
            read = {
                label: await client.call_tool("recall", {"operation": "read", "label": label})
                for label, _, _ in shown
            }
            bare = _ok(await client.call_tool("recall", {"operation": "read", "label": "dentist"}))
            elsewhere = await client.call_tool(
                "recall", {"operation": "read", "label": f"{other_agent}/deploy-key"}
            )
            appended = await client.call_tool(
                "recall",
                {"operation": "append", "label": "default/dentist", "content": "Moved."},
            )

    assert app_agent != other_agent
    # both entries labelled "dentist" are found, each under a label that opens it
    assert sorted((label, owner or "") for label, owner, _ in shown) == [
        ("default/dentist", "default"),
        ("dentist", ""),
    ]
    assert "deploy key" not in " ".join(text for _, _, text in shown)
    for label, owner, text in shown:
        entry = _ok(read[label])["entry"]
        assert (entry["label"], entry["shared_from"], entry["value"]) == (label, owner, text)
    person = _ok(read["default/dentist"])["entry"]
    assert person["permission"] == "read_only"  # the person's entry is read, not written
    # the project's own entry keeps its bare label
    assert bare["entry"]["value"] == "The app's dentist booking module."
    # another project's memory stays closed, by any name
    assert elsewhere.is_error is True
    assert "deploy key" not in str(elsewhere.content)
    assert appended.is_error is True
    store = SQLiteStore(db)
    try:
        assert (await store.get_block("default", "dentist")).value == "Dr Lee, Tuesdays."
    finally:
        await store.close()


async def test_a_project_reads_hits_by_id_and_loads_the_person_s_entry_as_a_copy(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    app = _repo(tmp_path / "app", "https://github.com/acme/app.git")
    other = _repo(tmp_path / "other", "https://github.com/acme/other.git")
    with anyio.fail_after(STARTUP * 3 + 60):
        async with serving(db, None) as client:  # the person's own memory
            _ok(
                await client.call_tool(
                    "recall",
                    {"operation": "insert", "label": "dentist", "content": "Dr Lee, Tuesdays."},
                )
            )
        async with serving(db, None, "--project-root", str(other)) as client:
            _ok(
                await client.call_tool(
                    "recall",
                    {"operation": "insert", "label": "key", "content": "Other dentist key."},
                )
            )
            seen = _ok(
                await client.call_tool("search", {"query": "key", "domain": "archival_memory"})
            )
            secret_id = next(h["id"] for h in seen["results"] if h["label"] == "key")
        async with serving(db, None, "--project-root", str(app)) as client:
            found = _ok(
                await client.call_tool("search", {"query": "dentist", "domain": "archival_memory"})
            )
            [hit] = found["results"]
            by_id = _ok(await client.call_tool("recall", {"operation": "read", "label": hit["id"]}))
            as_field = _ok(await client.call_tool("recall", {"operation": "read", "id": hit["id"]}))
            closed = await client.call_tool("recall", {"operation": "read", "label": secret_id})
            unknown = await client.call_tool("recall", {"operation": "read", "label": "f" * 32})
            loaded = _ok(
                await client.call_tool("context", {"operation": "load", "label": hit["label"]})
            )
            again = await client.call_tool("context", {"operation": "load", "label": hit["label"]})
            in_context = await _blocks(client)

    assert (hit["label"], hit["shared_from"]) == ("default/dentist", "default")
    assert by_id == as_field
    assert (by_id["entry"]["label"], by_id["entry"]["value"]) == (
        "default/dentist",
        "Dr Lee, Tuesdays.",
    )
    assert by_id["entry"]["permission"] == "read_only"
    # another project's entry stays closed by id too, and says nothing of it
    assert closed.is_error is True
    assert "Other dentist key" not in str(closed.content)
    # an unknown name: one line, saying the label and the id were both tried
    assert unknown.is_error is True
    [text] = [c.text for c in unknown.content if isinstance(c, types.TextContent)]
    assert "ff" * 16 in text
    assert "none has that id" in text
    assert "Traceback" not in text
    # the person's entry loads as a copy in the project's working memory
    assert loaded["block"]["label"] == "dentist"
    assert in_context["dentist"]["kind"] == "working"
    assert in_context["dentist"]["value"] == "Dr Lee, Tuesdays."
    assert in_context["dentist"]["shared_from"] is None  # the project's own copy
    assert again.is_error is True  # the label is taken now: a clear retry
    assert "target_label" in str(again.content)
    store = SQLiteStore(db)
    try:
        person = await store.get_block("default", "dentist")
    finally:
        await store.close()
    assert (person.kind.value, person.value, person.version) == ("archival", "Dr Lee, Tuesdays.", 1)


async def test_a_long_label_neither_stops_serve_mirror_nor_its_restart(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    folder = tmp_path / "memory"
    label = "ノート" * 33 + "x"  # 100 characters, 900 bytes once escaped
    params = satchel_stdio("--db", str(db), "--mirror", str(folder))
    for run in range(2):  # the second run starts on the database holding that label
        with anyio.fail_after(STARTUP + 60):
            async with Client(params, mode="legacy") as client:
                if run == 0:
                    created = await client.call_tool(
                        "context",
                        {"operation": "set", "label": label, "value": "Long-labelled."},
                    )
                    assert not created.is_error
                await _append(client, "human", f"Run {run}.")
                await _until(lambda r=run: f"Run {r}." in (folder / "blocks/human.md").read_text())
                assert label in (await _blocks(client))
    written = [p for p in (folder / "blocks").glob("*.md") if "~" in p.name]
    assert len(written) == 1
    assert written[0].read_text(encoding="utf-8").endswith("Long-labelled.")
