"""``satchel install``: each client's file and format, merging, backups, bad files,
``--dry-run`` and ``--remove``, on configuration folders in a temporary home; and the
written command line started as a real server and used by the MCP SDK client."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client as McpClient
from mcp import StdioServerParameters
from typer.testing import CliRunner, Result

from satchel.cli import app
from satchel.cli._install import CLIENTS, Client, config_path, satchel_command

runner = CliRunner()

STARTUP = 60  # seconds for a server process to start (imports are slow on 2 cores)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary home: every variable the config paths read points into it."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("APPDATA", str(home / "AppData" / "Roaming"))
    for name in ("CLAUDE_CONFIG_DIR", "SATCHEL_AGENT", "SATCHEL_DB"):
        monkeypatch.delenv(name, raising=False)
    return home


def install(*args: str) -> Result:
    return runner.invoke(app, ["install", *args], catch_exceptions=False)


def ok(*args: str) -> Result:
    result = install(*args)
    assert result.exit_code == 0, result.output
    return result


def one_error_line(result: Result, *words: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.output
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.*.bak"))


# -- where and what ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("client", "relative", "key", "typed"),
    [
        (Client.CLAUDE_DESKTOP, ".config/Claude/claude_desktop_config.json", "mcpServers", False),
        (Client.CURSOR, ".cursor/mcp.json", "mcpServers", False),
        (Client.CLAUDE_CODE, ".claude.json", "mcpServers", True),
        (Client.VSCODE, ".config/Code/User/mcp.json", "servers", True),
    ],
)
def test_each_client_gets_its_own_file_and_format(
    home: Path, tmp_path: Path, client: Client, relative: str, key: str, typed: bool
) -> None:
    db = tmp_path / "memory.db"
    result = ok(client.value, "--agent", "ada", "--db", str(db))

    path = home / relative
    written = json.loads(path.read_text())
    entry = written[key]["satchel"]
    root = CLIENTS[client].workspace_root
    who = ["--agent", "ada"] if root is None else ["--agent", "auto", "--person", "ada"]
    where = [] if root is None else ["--project-root", root]
    assert entry == {
        **({"type": "stdio"} if typed else {}),
        "command": satchel_command()[0],
        "args": [*satchel_command()[1:], "serve", *who, *where, "--db", str(db)],
    }
    assert list(written) == [key]
    assert f"Added the server 'satchel' to {CLIENTS[client].title}'s config {path}" in (
        result.stdout
    )
    assert backups(path) == []  # there was no old file


@pytest.mark.parametrize(
    ("client", "platform", "environ", "expected"),
    [
        (
            Client.CLAUDE_DESKTOP,
            "darwin",
            {"HOME": "/Users/ada"},
            "/Users/ada/Library/Application Support/Claude/claude_desktop_config.json",
        ),
        (
            Client.CLAUDE_DESKTOP,
            "win32",
            {"USERPROFILE": "C:/Users/ada", "APPDATA": "C:/Users/ada/AppData/Roaming"},
            "C:/Users/ada/AppData/Roaming/Claude/claude_desktop_config.json",
        ),
        (
            Client.CLAUDE_DESKTOP,
            "linux",
            {"HOME": "/home/ada"},
            "/home/ada/.config/Claude/claude_desktop_config.json",
        ),
        (
            Client.CLAUDE_DESKTOP,
            "linux",
            {"HOME": "/home/ada", "XDG_CONFIG_HOME": "/cfg"},
            "/cfg/Claude/claude_desktop_config.json",
        ),
        (Client.CURSOR, "darwin", {"HOME": "/Users/ada"}, "/Users/ada/.cursor/mcp.json"),
        (Client.CURSOR, "win32", {"USERPROFILE": "C:/Users/ada"}, "C:/Users/ada/.cursor/mcp.json"),
        (Client.CLAUDE_CODE, "linux", {"HOME": "/home/ada"}, "/home/ada/.claude.json"),
        (
            Client.CLAUDE_CODE,
            "linux",
            {"HOME": "/home/ada", "CLAUDE_CONFIG_DIR": "/home/ada/.config/claude"},
            "/home/ada/.config/claude/.claude.json",
        ),
        (
            Client.CLAUDE_CODE,
            "win32",
            {"USERPROFILE": "C:/Users/ada"},
            "C:/Users/ada/.claude.json",
        ),
        (
            Client.VSCODE,
            "darwin",
            {"HOME": "/Users/ada"},
            "/Users/ada/Library/Application Support/Code/User/mcp.json",
        ),
        (
            Client.VSCODE,
            "win32",
            {"USERPROFILE": "C:/Users/ada", "APPDATA": "C:/Users/ada/AppData/Roaming"},
            "C:/Users/ada/AppData/Roaming/Code/User/mcp.json",
        ),
        (Client.VSCODE, "linux", {"HOME": "/home/ada"}, "/home/ada/.config/Code/User/mcp.json"),
    ],
)
def test_config_paths_follow_each_clients_documentation_per_os(
    client: Client, platform: str, environ: dict[str, str], expected: str
) -> None:
    assert config_path(client, platform=platform, environ=environ) == Path(expected)


def test_the_command_is_the_absolute_console_script_of_this_environment() -> None:
    command = satchel_command()
    assert len(command) == 1
    script = Path(command[0])
    assert script.is_absolute()
    assert script.name == ("satchel.exe" if sys.platform == "win32" else "satchel")
    assert script.parent == Path(sys.executable).absolute().parent


def test_without_a_console_script_the_command_is_this_python_with_dash_m(tmp_path: Path) -> None:
    command = satchel_command(scripts_dirs=[tmp_path])
    assert command == [os.path.abspath(sys.executable), "-m", "satchel"]


def test_relative_db_and_tools_file_paths_are_made_absolute(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mytools.py").write_text(
        "from satchel import ToolRegistry\nregistry = ToolRegistry()\n"
    )
    monkeypatch.chdir(tmp_path)
    ok("cursor", "--db", "rel.db", "--tools", "mytools.py:registry", "--lazy")

    entry = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["satchel"]
    assert entry["args"] == [
        *satchel_command()[1:],
        "serve",
        "--agent",
        "auto",
        "--project-root",
        "${workspaceFolder}",
        "--db",
        str(tmp_path / "rel.db"),
        "--tools",
        f"{tmp_path / 'mytools.py'}:registry",
        "--lazy",
    ]


def test_a_postgres_url_is_passed_as_it_is(home: Path) -> None:
    url = "postgresql://ada@localhost:5432/memory"
    ok("cursor", "--db", url)
    entry = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["satchel"]
    assert entry["args"][-2:] == ["--db", url]


def test_agent_and_db_come_from_the_environment_like_the_other_commands(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SATCHEL_AGENT", "bob")
    monkeypatch.setenv("SATCHEL_DB", str(tmp_path / "env.db"))
    ok("cursor")
    entry = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["satchel"]
    assert entry["args"][-8:-4] == ["--agent", "auto", "--person", "bob"]
    assert entry["args"][-2:] == ["--db", str(tmp_path / "env.db")]


def test_an_unloadable_tools_target_is_refused_before_anything_is_written(home: Path) -> None:
    one_error_line(install("cursor", "--tools", "no_such_module_here:registry"), "--tools")
    assert not (home / ".cursor").exists()


def test_a_bad_server_name_is_refused(home: Path) -> None:
    one_error_line(install("cursor", "--name", "two words"), "--name")


def test_an_unknown_client_is_one_error_line(home: Path) -> None:
    one_error_line(install("emacs"), "claude-desktop", "vscode")


# -- merging, backups, rewriting ----------------------------------------------------------


def test_other_servers_and_keys_are_kept_in_order_and_the_old_file_is_backed_up(
    home: Path, tmp_path: Path
) -> None:
    path = home / ".config" / "Claude" / "claude_desktop_config.json"
    path.parent.mkdir(parents=True)
    old = {
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"A": "1"}}},
        "theme": "dark",
    }
    old_text = json.dumps(old, indent=4)
    path.write_text(old_text)

    result = ok("claude-desktop", "--db", str(tmp_path / "m.db"))

    new = json.loads(path.read_text())
    assert list(new) == ["globalShortcut", "mcpServers", "theme"]
    assert new["theme"] == "dark"
    assert list(new["mcpServers"]) == ["git", "satchel"]
    assert new["mcpServers"]["git"] == old["mcpServers"]["git"]
    [backup] = backups(path)
    assert backup.read_text() == old_text
    assert str(backup) in result.stdout
    assert list(path.parent.glob("*.tmp")) == []


def test_running_again_replaces_its_own_entry_and_says_so(home: Path) -> None:
    ok("cursor", "--agent", "ada")
    result = ok("cursor", "--agent", "bob")

    servers = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert list(servers) == ["satchel"]
    assert servers["satchel"]["args"][-4:-2] == ["--person", "bob"]
    assert "Replaced the server 'satchel'" in result.stdout
    assert len(backups(home / ".cursor" / "mcp.json")) == 1


def test_running_again_with_the_same_options_changes_nothing(home: Path) -> None:
    ok("cursor", "--agent", "ada")
    path = home / ".cursor" / "mcp.json"
    before = path.stat().st_mtime_ns

    result = ok("cursor", "--agent", "ada")

    assert "nothing changed" in result.stdout
    assert path.stat().st_mtime_ns == before
    assert backups(path) == []


def test_a_second_name_adds_a_second_server(home: Path) -> None:
    ok("cursor", "--agent", "ada")
    ok("cursor", "--agent", "bob", "--name", "satchel-bob")
    servers = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert list(servers) == ["satchel", "satchel-bob"]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"mcpServers": {', ["not valid JSON", "line 1"]),
        ('{"mcpServers": {},}', ["not valid JSON"]),  # strict JSON outside VS Code
        ("[1, 2]", ["list", "not an object"]),
        ('{"mcpServers": ["x"]}', ["'mcpServers'", "not a JSON object"]),
        (b"\xff\xfe{}", ["Cannot read"]),
    ],
)
def test_a_file_that_is_not_a_json_object_is_one_error_line_and_left_alone(
    home: Path, content: str | bytes, words: list[str]
) -> None:
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    data = content if isinstance(content, bytes) else content.encode()
    path.write_bytes(data)

    one_error_line(install("cursor"), str(path), *words)

    assert path.read_bytes() == data
    assert sorted(p.name for p in path.parent.iterdir()) == ["mcp.json"]


def test_an_empty_file_is_treated_as_a_new_one(home: Path) -> None:
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text("\n")
    ok("cursor")
    assert list(json.loads(path.read_text())["mcpServers"]) == ["satchel"]


def test_vscode_comments_and_trailing_commas_are_read_and_kept_in_the_backup(home: Path) -> None:
    path = home / ".config" / "Code" / "User" / "mcp.json"
    path.parent.mkdir(parents=True)
    old = """{
  // my servers
  "servers": {
    "docs": {"type": "http", "url": "https://example.com/mcp?a=1//b", /* inline */},
  },
  "inputs": [],
}
"""
    path.write_text(old)

    result = ok("vscode")

    new = json.loads(path.read_text())
    assert new["servers"]["docs"] == {"type": "http", "url": "https://example.com/mcp?a=1//b"}
    assert new["servers"]["satchel"]["type"] == "stdio"
    assert new["inputs"] == []
    assert "comments" in result.stdout
    [backup] = backups(path)
    assert backup.read_text() == old


def test_a_symlinked_config_file_is_rewritten_where_it_points(home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "mcp.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"mcpServers": {}}')
    link = home / ".cursor" / "mcp.json"
    link.parent.mkdir()
    link.symlink_to(dotfiles)

    ok("cursor")

    assert link.is_symlink()
    assert "satchel" in json.loads(dotfiles.read_text())["mcpServers"]


def test_an_existing_files_permissions_are_kept_and_a_new_one_is_private(home: Path) -> None:
    ok("cursor")
    new = home / ".cursor" / "mcp.json"
    assert stat.S_IMODE(new.stat().st_mode) == 0o600

    new.chmod(0o644)
    ok("cursor", "--agent", "ada")
    assert stat.S_IMODE(new.stat().st_mode) == 0o644


def test_config_overrides_the_clients_usual_file(home: Path, tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "custom.json"
    ok("claude-code", "--config", str(target))
    assert json.loads(target.read_text())["mcpServers"]["satchel"]["type"] == "stdio"
    assert not (home / ".claude.json").exists()


def test_config_naming_a_directory_is_refused(home: Path, tmp_path: Path) -> None:
    one_error_line(install("cursor", "--config", str(tmp_path)), "directory")


# -- dry run and remove --------------------------------------------------------------------


def test_dry_run_prints_the_entry_and_the_file_and_writes_nothing(home: Path) -> None:
    result = ok("claude-code", "--agent", "ada", "--dry-run")

    printed = json.loads(result.stdout)
    assert printed["mcpServers"]["satchel"]["args"][-5:-2] == ["auto", "--person", "ada"]
    assert str(home / ".claude.json") in result.stderr
    assert "nothing written" in result.stderr
    assert list(home.iterdir()) == []


def test_remove_deletes_only_its_own_entry(home: Path) -> None:
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": {"git": {"command": "uvx"}}, "x": 1}')
    ok("cursor")

    result = ok("cursor", "--remove")

    assert json.loads(path.read_text()) == {"mcpServers": {"git": {"command": "uvx"}}, "x": 1}
    assert "Removed the server 'satchel'" in result.stdout
    assert "nothing to do" in ok("cursor", "--remove").stdout


# -- the written command runs ----------------------------------------------------------------


def _written_command(path: Path, key: str) -> tuple[str, list[str]]:
    entry: dict[str, Any] = json.loads(path.read_text())[key]["satchel"]
    return entry["command"], entry["args"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("client", "relative", "key"),
    [
        (Client.CLAUDE_DESKTOP, ".config/Claude/claude_desktop_config.json", "mcpServers"),
        (Client.VSCODE, ".config/Code/User/mcp.json", "servers"),
    ],
)
async def test_the_written_command_starts_a_server_an_mcp_client_can_use(
    home: Path, tmp_path: Path, client: Client, relative: str, key: str
) -> None:
    ok(client.value, "--agent", "ada", "--db", str(tmp_path / "memory.db"))
    command, args = _written_command(home / relative, key)
    elsewhere = tmp_path / "elsewhere"  # a client starts servers in a folder of its own
    elsewhere.mkdir()
    params = StdioServerParameters(command=command, args=args, cwd=elsewhere)

    with anyio.fail_after(STARTUP):
        async with McpClient(params) as session:
            tools = {tool.name for tool in (await session.list_tools()).tools}
            instructions = session.instructions

    assert {"context", "recall", "search", "send_message"} <= tools
    assert instructions is not None
    assert '<memory agent="ada">' in instructions
    assert (tmp_path / "memory.db").exists()


@pytest.mark.parametrize("client", list(Client))
def test_editors_get_per_project_memory_by_default_and_claude_desktop_one_memory(
    home: Path, client: Client
) -> None:
    result = ok(client.value, "--config", str(home / "c.json"))
    entry = json.loads((home / "c.json").read_text())[CLIENTS[client].key]["satchel"]
    if client is Client.CLAUDE_DESKTOP:
        assert "--agent" not in entry["args"]
        assert "Each project gets its own memory" not in result.stdout
    else:
        root = CLIENTS[client].workspace_root
        assert root is not None
        assert entry["args"][-5:] == ["serve", "--agent", "auto", "--project-root", root]
        assert "Each project gets its own memory" in result.stdout
    again = ok(client.value, "--config", str(home / "c.json"), "--no-projects")
    entry = json.loads((home / "c.json").read_text())[CLIENTS[client].key]["satchel"]
    assert entry["args"][-1:] == ["serve"]
    assert "Each project gets its own memory" not in again.stdout


@pytest.mark.parametrize("client", list(Client))
def test_every_client_gets_the_person_agent_names(home: Path, client: Client) -> None:
    ok(client.value, "--config", str(home / "c.json"), "--agent", "me")
    args = json.loads((home / "c.json").read_text())[CLIENTS[client].key]["satchel"]["args"]
    if client is Client.CLAUDE_DESKTOP:
        assert args[-3:] == ["serve", "--agent", "me"]
    else:
        root = CLIENTS[client].workspace_root
        assert root is not None
        assert args[-7:] == ["serve", "--agent", "auto", "--person", "me", "--project-root", root]
    ok(client.value, "--config", str(home / "c.json"), "--agent", "me", "--no-projects")
    args = json.loads((home / "c.json").read_text())[CLIENTS[client].key]["satchel"]["args"]
    assert args[-3:] == ["serve", "--agent", "me"]


def test_no_projects_with_agent_auto_is_one_error_line(home: Path) -> None:
    one_error_line(install("cursor", "--agent", "auto", "--no-projects"), "--no-projects")


def _roots(*folders: Path) -> Any:
    async def callback(_context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root(uri=p.as_uri(), name=p.name) for p in folders]  # type: ignore[arg-type]
        )

    return callback


def _structured(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is not True, result.content
    assert result.structured_content is not None
    return result.structured_content


async def _human_of(session: McpClient) -> dict[str, Any]:
    listed = _structured(await session.call_tool("context", {"operation": "list"}))
    return {b["label"]: b for b in listed["blocks"] if b["label"].endswith("human")}


@pytest.mark.anyio
async def test_a_fact_told_through_claude_desktop_reaches_a_project_in_an_editor(
    home: Path, tmp_path: Path
) -> None:
    db = str(tmp_path / "memory.db")
    ok("claude-desktop", "--agent", "me", "--db", db)
    ok("cursor", "--agent", "me", "--db", db)
    desktop = _written_command(home / ".config/Claude/claude_desktop_config.json", "mcpServers")
    cursor = _written_command(home / ".cursor/mcp.json", "mcpServers")
    project = tmp_path / "app"
    project.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def params(command: tuple[str, list[str]]) -> StdioServerParameters:
        return StdioServerParameters(command=command[0], args=command[1], cwd=elsewhere)

    with anyio.fail_after(STARTUP * 3):
        async with McpClient(params(desktop)) as session:
            told = {"operation": "append", "label": "human", "content": "Likes green tea."}
            _structured(await session.call_tool("context", told))
        async with McpClient(
            params(cursor), mode="legacy", list_roots_callback=_roots(project)
        ) as session:
            in_project = await _human_of(session)
            told = {"operation": "append", "label": "human", "content": "Uses tabs."}
            _structured(await session.call_tool("context", told))
            instructions = session.instructions or ""
        async with McpClient(params(desktop)) as session:
            on_desktop = await _human_of(session)

    assert "Likes green tea." in in_project["me/human"]["value"]
    assert in_project["me/human"]["shared_from"] == "me"
    assert "Memory is per project" in instructions
    assert "Likes green tea." in on_desktop["human"]["value"]
    assert "Uses tabs." in on_desktop["human"]["value"]
