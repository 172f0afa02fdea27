"""Per-project memory in the library: naming a project from its workspace root, and
setting its memory up with the person's global blocks shared in."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from satchel._errors import InvalidInputError, PermissionDeniedError
from satchel.cli import app
from satchel.memory import (
    PROJECT_LABEL,
    BlockKind,
    Permission,
    SQLiteStore,
    ensure_project,
    project_for_root,
    project_of,
    validate_agent,
)

pytestmark = pytest.mark.anyio


def _repo(path: Path, remote: str | None = None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    if remote is not None:
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", remote], check=True)
    return path


@pytest.mark.parametrize(
    "remote",
    [
        "git@github.com:Acme/App.git",
        "https://github.com/acme/app",
        "https://ada:token@GitHub.com/acme/app.git/",
        "ssh://git@github.com/acme/app.git",
        "git+ssh://git@github.com:22/Acme/app",
    ],
)
def test_every_way_of_cloning_one_repository_gives_one_project(tmp_path: Path, remote: str) -> None:
    root = _repo(tmp_path / "clone", remote)
    project = project_for_root(root.as_uri())
    assert project.key == "github.com/acme/app"
    assert project.agent == "project:github.com:acme:app"
    assert project.remote == remote.replace("ada:token@", "")
    assert "token" not in project.key


def test_a_folder_inside_the_repository_and_a_worktree_are_the_same_project(
    tmp_path: Path,
) -> None:
    main = _repo(tmp_path / "main", "https://git.example.org/team/tool.git")
    (main / "README").write_text("x")
    subprocess.run(["git", "-C", str(main), "add", "README"], check=True)
    subprocess.run(
        ["git", "-C", str(main), "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "x"],
        check=True,
    )
    subprocess.run(
        ["git", "-C", str(main), "worktree", "add", "-q", str(tmp_path / "wt")], check=True
    )
    (main / "src" / "deep").mkdir(parents=True)
    keys = {
        project_for_root(str(main / "src" / "deep")).key,
        project_for_root((tmp_path / "wt").as_uri()).key,
        project_for_root(main.as_uri()).key,
    }
    assert keys == {"git.example.org/team/tool"}


def test_the_first_remote_counts_when_there_is_no_origin(tmp_path: Path) -> None:
    root = _repo(tmp_path / "r")
    subprocess.run(
        ["git", "-C", str(root), "remote", "add", "upstream", "git@host.example:x/y.git"],
        check=True,
    )
    assert project_for_root(str(root)).key == "host.example/x/y"


def test_without_a_remote_the_path_names_the_project(tmp_path: Path) -> None:
    plain = tmp_path / "notes with space"
    plain.mkdir()
    project = project_for_root(plain.as_uri())
    assert project.key == plain.as_posix().lstrip("/")
    assert project.remote is None
    assert "/" not in project.agent
    assert project_for_root(str(plain)).agent == project.agent


@pytest.mark.parametrize("root", ["", "   ", "https://example.org/app", "ssh://host/x"])
def test_a_root_that_is_no_local_folder_is_refused(root: str) -> None:
    with pytest.raises(InvalidInputError):
        project_for_root(root)


def test_a_very_long_path_still_gives_a_valid_distinct_agent() -> None:
    one = project_for_root("file:///" + "a" * 400 + "/one")
    two = project_for_root("file:///" + "a" * 400 + "/two")
    assert len(one.agent) <= 128
    assert one.agent != two.agent
    assert validate_agent(one.agent) == one.agent


@given(st.text(max_size=300))
def test_any_root_gives_a_valid_agent_or_a_clear_error(root: str) -> None:
    try:
        project = project_for_root(root)
    except InvalidInputError as exc:
        message = exc.message
        project = None
    if project is None:
        assert message.startswith("a workspace root")
        return
    assert validate_agent(project.agent) == project.agent
    assert project.agent.startswith("project:")


async def test_ensure_project_sets_up_once_and_shares_global_blocks_made_later(
    tmp_path: Path,
) -> None:
    project = project_for_root(_repo(tmp_path / "app", "git@github.com:acme/app.git").as_uri())
    async with SQLiteStore(tmp_path / "m.db") as store:
        first = await ensure_project(store, project)
        await store.update_block_text(project.agent, PROJECT_LABEL, "Builds with make.")
        await store.create_block("default", "style", "Short answers.", tags=["global"])
        await store.create_block("default", "diary", "Private.")
        await store.create_block("default", "old", "x", kind=BlockKind.ARCHIVAL, tags=["global"])
        second = await ensure_project(store, project)
        third = await ensure_project(store, project)
        mine = {b.label: b for b in await store.list_blocks(project.agent)}
        found = await project_of(store, project.agent)
        assert await project_of(store, "default") is None

    assert sorted(first) == ["human", "persona"]
    assert second == ["style"]  # a global block made later reaches the project
    assert third == []
    assert mine[PROJECT_LABEL].value == "Builds with make."  # set up once, never again
    assert mine["human"].agent == "default"
    assert "diary" not in mine
    assert "old" not in mine  # archival entries are searched, not shared
    assert found is not None
    assert (found.key, found.root) == ("github.com/acme/app", project.root)


def test_memory_agents_shows_projects_and_their_roots(tmp_path: Path) -> None:
    project = project_for_root(_repo(tmp_path / "app", "git@github.com:acme/app.git").as_uri())
    db = tmp_path / "m.db"

    async def set_up() -> None:
        async with SQLiteStore(db) as store:
            await ensure_project(store, project)

    anyio.run(set_up)
    runner = CliRunner()
    rows = json.loads(runner.invoke(app, ["memory", "agents", "--db", str(db), "--json"]).stdout)
    table = runner.invoke(app, ["memory", "agents", "--db", str(db)], env={"COLUMNS": "250"}).stdout
    by_name = {row["name"]: row for row in rows}
    assert by_name["default"]["project"] is None
    assert by_name[project.agent]["project"] == {
        "key": "github.com/acme/app",
        "root": project.root,
        "remote": "git@github.com:acme/app.git",
    }
    assert "github.com/acme/app (file://" in table


def test_git_remote_credentials_are_never_stored(tmp_path: Path) -> None:
    remote = "https://alice:ghp_SECRET123@github.com/acme/app.git"
    project = project_for_root(_repo(tmp_path / "app", remote).as_uri())
    assert project.remote == "https://github.com/acme/app.git"
    db = tmp_path / "m.db"

    async def set_up() -> None:
        async with SQLiteStore(db) as store:
            await ensure_project(store, project)

    anyio.run(set_up)
    runner = CliRunner()
    listed = runner.invoke(app, ["memory", "agents", "--db", str(db), "--json"]).stdout
    exported = runner.invoke(app, ["memory", "export", "--db", str(db), "--agent", project.agent])
    assert "https://github.com/acme/app.git" in listed
    assert "ghp_SECRET123" not in listed + exported.stdout
    assert "alice" not in listed + exported.stdout


def test_a_remote_stored_with_credentials_before_is_shown_without_them(tmp_path: Path) -> None:
    found_root = project_for_root(_repo(tmp_path / "app").as_uri())
    project = dataclasses.replace(found_root, remote="https://bob:TOKEN@host.example/x/y")
    db = tmp_path / "m.db"

    async def check() -> None:
        async with SQLiteStore(db) as store:
            await ensure_project(store, project)  # as an earlier version recorded it
            found = await project_of(store, project.agent)
            assert found is not None
            assert found.remote == "https://host.example/x/y"

    anyio.run(check)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("file:///p/a/b", "file:///p/a:b"),
        ("file://host/share", "file:///share"),
        ("file://host/share", "file:///host/share"),
        ("file:///p/a%25b", "file:///p/a%b/x"),
        ("file:///p/a%3Ab", "file:///p/a/b"),
    ],
)
def test_different_roots_never_share_a_project(one: str, other: str) -> None:
    assert project_for_root(one).agent != project_for_root(other).agent


@pytest.mark.parametrize(
    ("root", "same_as"),
    [
        ("file:///p/a/%2e%2e/b", "file:///p/b"),
        ("file:///p/a/../b/", "file:///p/b"),
        ("file:///p/./b//", "file:///p/b"),
        ("file://localhost/p/b", "file:///p/b"),
        ("/p/x/../b", "file:///p/b"),
    ],
)
def test_one_folder_written_several_ways_is_one_project(root: str, same_as: str) -> None:
    assert project_for_root(root).agent == project_for_root(same_as).agent


def test_a_share_on_another_machine_keeps_its_host() -> None:
    project = project_for_root("file://fileserver/team/app")
    assert "fileserver" in project.agent
    assert project.agent != project_for_root("file:///team/app").agent


@pytest.mark.parametrize("root", ["file:///", "/", "file:///%2e%2e", "file:///p/..", "C:/"])
def test_the_filesystem_root_is_no_project(root: str) -> None:
    with pytest.raises(InvalidInputError, match="is no project"):
        project_for_root(root)


def test_names_of_paths_without_colons_or_percent_signs_are_unchanged() -> None:
    assert project_for_root("file:///home/ada/app").agent == "project:home:ada:app"
    assert project_for_root("file:///C:/code/app").agent == "project:C::code:app"


def test_a_windows_root_never_takes_the_remote_of_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On POSIX ``C:/code/app`` is a relative path; resolved, it fell inside the
    repository the process ran in and took that repository's remote (CI's checkout)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(
        ["git", "-C", str(tmp_path), "remote", "add", "origin", "https://example.com/acme/here"],
        check=True,
    )
    monkeypatch.chdir(tmp_path)
    project = project_for_root("file:///C:/code/app")
    assert project.agent == "project:C::code:app"
    assert project.remote is None


@given(
    st.lists(
        st.text(alphabet="ab:%./-", min_size=1, max_size=4).filter(lambda s: s not in {".", ".."}),
        min_size=1,
        max_size=4,
    ),
    st.lists(
        st.text(alphabet="ab:%./-", min_size=1, max_size=4).filter(lambda s: s not in {".", ".."}),
        min_size=1,
        max_size=4,
    ),
)
def test_the_mapping_is_injective_over_normalised_paths(a: list[str], b: list[str]) -> None:
    import posixpath

    path_a = posixpath.normpath("/" + "/".join(a))
    path_b = posixpath.normpath("/" + "/".join(b))
    if path_a in {"/", "//"} or path_b in {"/", "//"} or path_a == path_b:
        return
    assert project_for_root(path_a).agent != project_for_root(path_b).agent


async def test_a_project_adds_to_the_persons_blocks_but_never_rewrites_or_archives_them(
    tmp_path: Path,
) -> None:
    project = project_for_root(_repo(tmp_path / "app").as_uri())
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as store:
        await ensure_project(store, project)
        await store.update_block_text("default", "human", "Name: Ada.\nLives in Porto.")
        added = await store.append_to_block(project.agent, "human", "Prefers tabs.")
        refusals = []
        for write in (
            store.update_block_text(project.agent, "human", "wiped"),
            store.replace_in_block(project.agent, "human", "Porto", "Lisbon"),
            store.set_kind(project.agent, "human", BlockKind.ARCHIVAL),
            store.delete_block(project.agent, "human"),
        ):
            with pytest.raises(PermissionDeniedError):
                await write
            refusals.append(write)
        human = await store.get_block("default", "human")
        in_context = {b.label for b in await store.list_blocks(project.agent)}

    assert added.value == "Name: Ada.\nLives in Porto.\nPrefers tabs."
    assert human.value == added.value  # nothing one client was told is lost
    assert human.kind is BlockKind.CORE
    assert "human" in in_context
    assert len(refusals) == 4


async def test_a_share_made_by_an_earlier_version_is_lowered_to_append_and_a_read_only_one_skipped(
    tmp_path: Path,
) -> None:
    project = project_for_root(_repo(tmp_path / "app").as_uri())
    async with SQLiteStore(tmp_path / "m.db", embedder=None) as store:
        await ensure_project(store, project)
        await store.share_block("default", "human", project.agent, Permission.READ_WRITE)
        await ensure_project(store, project)  # the next session
        human = await store.get_block("default", "human")
        await store.create_block(
            "default", "rules", "Be brief.", tags=["global"], permission=Permission.READ_ONLY
        )
        await ensure_project(store, project)
        rules = await store.get_block("default", "rules")

    assert human.shares[project.agent] is Permission.APPEND
    assert project.agent not in rules.shares  # read_only: the gate lets no one share it
