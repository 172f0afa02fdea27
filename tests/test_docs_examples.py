"""The documentation's examples are real code (issue 29, item 8).

Every ``python`` block of README.md and docs/*.md is one test, named by its file and
number (``docs/tools.md#3``): it runs alone, as a script, in a fresh process whose
working directory is an empty temporary folder, and fails with the block's text and
what it printed. It must leave that folder as it found it (an example's files go in a
``tempfile.mkdtemp()`` folder) and print what it shows (no bare ``result.reply``). A
block of another language in the same document whose first line names a file
(``# bakery.toml``) is written to that folder first, so an example can read the
configuration shown above it. A block that needs what a test cannot have (a hosted
model, a real service) follows a ``<!-- not run: why -->`` line; it is still compiled,
and every name it imports from satchel must exist.

The command lines are checked against the real CLI: every ``satchel`` (or ``uv run
satchel``) line of a ``bash`` block, the MCP client entries of the JSON blocks and the
plain blocks that sum the CLI up name real commands and options; ``--help`` of each
documented command, the ``install --dry-run`` lines and ``memory merge`` run.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main

from satchel.cli import app

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
FENCE = re.compile(r"^```(\w*)\s*$")
NOT_RUN = re.compile(r"^<!-- not run: (?P<why>.+?) -->$")
FILE_NAME = re.compile(r"^# (?P<name>[\w.-]+\.\w+)$")


@dataclass(frozen=True, kw_only=True)
class Block:
    """One fenced code block of a document."""

    document: Path
    language: str
    number: int
    line: int
    code: str
    not_run: str | None

    @property
    def id(self) -> str:
        return f"{self.document.relative_to(ROOT).as_posix()}#{self.number}"

    def shown(self) -> str:
        lines = self.code.splitlines()
        return "\n".join(f"{self.line + i:4} | {text}" for i, text in enumerate(lines, 1))


def _blocks(languages: frozenset[str]) -> list[Block]:
    found: list[Block] = []
    for document in DOCUMENTS:
        lines = document.read_text(encoding="utf-8").splitlines()
        number = 0
        index = 0
        while index < len(lines):
            opened = FENCE.match(lines[index])
            if opened is None:
                index += 1
                continue
            end = index + 1
            while end < len(lines) and lines[end].rstrip() != "```":
                end += 1
            language = opened.group(1)
            if language in languages:
                number += 1
                marker = NOT_RUN.match(lines[index - 1]) if index else None
                found.append(
                    Block(
                        document=document,
                        language=language,
                        number=number,
                        line=index + 1,
                        code="\n".join(lines[index + 1 : end]) + "\n",
                        not_run=marker.group("why") if marker else None,
                    )
                )
            index = end + 1
    return found


PYTHON = _blocks(frozenset({"python", "py"}))
BASH = _blocks(frozenset({"bash", "sh", "shell"}))
DATA = _blocks(frozenset({"toml", "yaml", "json"}))


def _files_shown(document: Path) -> dict[str, str]:
    """The files ``document`` shows whole: ``# name.ext`` blocks, by name."""
    files: dict[str, str] = {}
    for block in DATA:
        named = FILE_NAME.match(block.code.splitlines()[0])
        if block.document == document and named is not None:
            files[named.group("name")] = block.code
    return files


def test_the_documents_have_python_examples() -> None:
    assert len(PYTHON) >= 29
    assert all(block.language == "python" for block in PYTHON), "use ```python, not ```py"


def test_few_examples_are_left_unrun() -> None:
    # each needs what a test cannot have: a hosted model with a Telegram bot (channels,
    # up), an embeddings server, a whole storage backend; all are still compiled
    unrun = [block.id for block in PYTHON if block.not_run]
    assert len(unrun) <= 4, unrun


RUNNABLE = [b for b in PYTHON if not b.not_run]


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.id)
def test_python_example_runs(block: Block, tmp_path: Path) -> None:
    work = tmp_path / "work"
    scratch = tmp_path / "scratch"
    work.mkdir()
    scratch.mkdir()
    shown = _files_shown(block.document)
    for name, text in shown.items():
        (work / name).write_text(text, encoding="utf-8")
    script = work / "example.py"
    script.write_text(block.code, encoding="utf-8")
    env = {**os.environ, "TMPDIR": str(scratch), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert done.returncode == 0, (
        f"{block.id} (line {block.line}) failed:\n{block.shown()}\n"
        f"--- stdout\n{done.stdout}--- stderr\n{done.stderr}"
    )
    left = sorted(path.name for path in work.iterdir())
    assert left == sorted({"example.py", *shown}), (
        f"{block.id} wrote {left} where it was run: an example's files go in a scratch "
        "folder (tempfile.mkdtemp())"
    )


@pytest.mark.parametrize("block", RUNNABLE, ids=lambda b: b.id)
def test_python_example_prints_what_it_shows(block: Block) -> None:
    """A value left as a bare expression (``result.reply``) shows nothing when the
    block runs as a script: print it."""
    bare = [
        ast.unparse(node)
        for node in ast.walk(ast.parse(block.code))
        if isinstance(node, ast.Expr)
        and not isinstance(node.value, ast.Call | ast.Await | ast.Constant)
    ]
    assert not bare, f"{block.id}: print {bare}"


@pytest.mark.parametrize("block", [b for b in PYTHON if b.not_run], ids=lambda b: b.id)
def test_unrun_python_example_compiles_and_imports_real_names(block: Block) -> None:
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    tree = compile(block.code, block.id, "exec", flags=flags, dont_inherit=True)
    assert isinstance(tree, ast.Module)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("satchel"):
            module = importlib.import_module(node.module or "")
            missing = [a.name for a in node.names if not hasattr(module, a.name)]
            assert not missing, f"{block.id}: {node.module} has no {missing}"


def _satchel_commands(block: Block) -> list[list[str]]:
    """The ``satchel ...`` command lines of a shell block, as argument lists after the
    word ``satchel``, comments and line continuations removed."""
    text = block.code.replace("\\\n", " ")
    commands: list[list[str]] = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if words[:2] == ["uv", "run"]:
            words = words[2:]
        if words[:1] == ["satchel"]:
            commands.append(words[1:])
    return commands


SATCHEL_LINES = [
    pytest.param(block, words, id=f"{block.id}:{' '.join(words[:2])}")
    for block in BASH
    for words in _satchel_commands(block)
]


def _resolve(words: list[str]) -> tuple[Any, list[str], list[str]]:
    """The (click) command a satchel command line reaches, its path and what follows.
    typer vendors its own click, so commands are told apart by their ``commands``."""
    command: Any = typer.main.get_command(app)
    path: list[str] = []
    rest = list(words)
    while hasattr(command, "commands") and rest and not rest[0].startswith("-"):
        sub = command.commands.get(rest[0])
        assert sub is not None, f"satchel {' '.join(path)} has no command {rest[0]!r}"
        path.append(rest.pop(0))
        command = sub
    return command, path, rest


def _unknown_options(command: Any, words: list[str]) -> list[str]:
    """The options among ``words`` (``--db``, ``--db=x``) that ``command`` lacks."""
    options = {name for param in command.params for name in getattr(param, "opts", [])}
    used = [word.split("=", 1)[0] for word in words if word.startswith("-")]
    return [flag for flag in used if flag not in options]


def _client_entries() -> list[list[str]]:
    """The ``"args": ["serve", ...]`` of the MCP client entries the JSON blocks show."""
    entries: list[list[str]] = []
    for block in DATA:
        for listed in re.findall(r'"args":\s*(\[.*?\])', block.code, re.S):
            entries.append(json.loads(listed))
    return entries


def test_client_entries_name_real_commands_and_options() -> None:
    entries = _client_entries()
    assert len(entries) >= 2
    for words in entries:
        command, path, rest = _resolve(words)
        unknown = _unknown_options(command, rest)
        assert not unknown, f"satchel {' '.join(path)} has no option {unknown}"


def test_shell_examples_run_satchel() -> None:
    assert len(SATCHEL_LINES) >= 20


@pytest.mark.parametrize(("block", "words"), SATCHEL_LINES)
def test_shell_example_names_a_real_command_and_real_options(
    block: Block, words: list[str]
) -> None:
    command, path, rest = _resolve(words)
    assert not hasattr(command, "commands"), f"{block.id}: satchel {path} needs a command"
    unknown = _unknown_options(command, rest)
    where = f"{block.id}: satchel {' '.join(path)}"
    assert not unknown, f"{where} has no option {unknown}"


def _run_satchel(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "satchel", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_every_documented_command_has_help(tmp_path: Path) -> None:
    paths = sorted(
        {tuple(_resolve(words)[1]) for block in BASH for words in _satchel_commands(block)}
    )
    for path in paths:
        done = _run_satchel([*path, "--help"], tmp_path)
        assert done.returncode == 0, f"satchel {' '.join(path)} --help:\n{done.stderr}"


def test_documented_install_dry_runs_print_an_entry_and_write_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "APPDATA": str(home)}
    dry = [
        w for b in BASH for w in _satchel_commands(b) if w[:1] == ["install"] and "--dry-run" in w
    ]
    assert dry
    for words in dry:
        done = _run_satchel(words, tmp_path, env)
        assert done.returncode == 0, f"satchel {' '.join(words)}:\n{done.stderr}"
        assert '"satchel"' in done.stdout
    assert list(home.iterdir()) == []


def test_documented_memory_merge_runs_on_a_temporary_database(tmp_path: Path) -> None:
    db = str(tmp_path / "memory.db")
    for agent in ("default", "me"):
        made = _run_satchel(["memory", "set", "notes", "x", "--db", db, "--agent", agent], tmp_path)
        assert made.returncode == 0, made.stderr
    block = next(b for b in BASH if "memory merge" in b.code)
    for words in _satchel_commands(block):
        done = _run_satchel([*words, "--db", db], tmp_path)
        assert done.returncode == 0, f"satchel {' '.join(words)}:\n{done.stderr}"


def test_the_inspector_examples_start_satchel_from_the_checkout() -> None:
    """The Inspector spawns its command itself; in a checkout there is no ``satchel`` on
    ``PATH`` (``spawn satchel ENOENT``), so the command is ``uv run satchel``."""
    lines = [
        line
        for block in BASH
        for line in block.code.splitlines()
        if "@modelcontextprotocol/inspector" in line
    ]
    assert lines
    for line in lines:
        words = shlex.split(line, comments=True)
        command = words[words.index("--cli") + 1 :]
        assert command[:4] == ["uv", "run", "satchel", "serve"], line


def _every_option(command: Any) -> set[str]:
    """The options of ``command`` and of every command under it."""
    found: set[str] = set()
    for param in getattr(command, "params", ()):
        found |= {*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())}
    for sub in getattr(command, "commands", {}).values():
        found |= _every_option(sub)
    return found


SYNOPSES = [block for block in _blocks(frozenset({""})) if block.code.startswith("satchel ")]


@pytest.mark.parametrize("block", SYNOPSES, ids=lambda b: b.id)
def test_cli_synopsis_names_real_commands_and_options(block: Block) -> None:
    """The plain blocks that sum the CLI up (``satchel serve [--db PATH] ...``): each
    ``satchel NAME`` is a command, and each option on its lines is one of its own (or of
    a command in its group)."""
    root: Any = typer.main.get_command(app)
    command: Any = None
    wrong: list[str] = []
    for line in block.code.splitlines():
        named = re.match(r"^satchel (\w+)", line)
        if named is not None:
            command = root.commands.get(named.group(1))
            assert command is not None, f"{block.id}: no command satchel {named.group(1)}"
        if command is None:
            continue
        used = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", line))
        wrong += [f"{command.name} {flag}" for flag in sorted(used - _every_option(command))]
    assert not wrong, f"{block.id}: no such option: {wrong}"
