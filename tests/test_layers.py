"""Every package sits below what it serves.

``ALLOWED`` is the table of arrows between satchel's packages (and its top-level
modules): which others each may import. It follows DESIGN.md's layering, from the
bottom: the base modules (errors, counts, redaction, throttling, version), storage,
``schema`` → ``tools`` → ``registry``; ``retrieval``, ``embed`` and ``rules`` beside
them; ``memory`` → ``consent`` → ``meta``; ``channels`` (outbound delivery and its
configuration) → ``builtin`` (the memory tools); ``mcp``, ``agent`` and ``console``
above those; ``cli`` and the root package on top. The test reads every import in
``src/satchel``, at module level, inside functions and under ``TYPE_CHECKING``, and
fails naming the file, the line and the arrow the table does not allow.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import satchel

SRC = Path(satchel.__file__).parent

BASE = frozenset({"_errors", "_counts", "_redact", "_throttle", "_version"})
"""Modules every layer may use; they import nothing of satchel's but each other."""

STORAGE = frozenset({"db"})
"""The storage layer: migrations, SQLite files, PostgreSQL pools and the one URL switch,
``open_database`` (issue 29 item 5)."""

ALLOWED: dict[str, frozenset[str]] = {
    "_errors": frozenset(),
    "_counts": frozenset(),
    "_redact": frozenset(),
    "_throttle": frozenset(),
    "_version": frozenset(),
    "db": frozenset(),
    "schema": frozenset(),
    "tools": frozenset({"schema"}),
    "registry": frozenset({"schema", "tools"}),
    "retrieval": frozenset(),
    "rules": frozenset(),
    "embed": frozenset({"registry", "tools"}),  # the model-loading progress wrapper
    "memory": STORAGE | {"embed", "retrieval", "tools"},
    "consent": STORAGE | {"memory", "registry", "tools"},
    # compat: the seeds' result shapes (issue 32), which the meta-tools answer in
    "compat": frozenset({"registry", "tools"}),
    "meta": STORAGE | {"compat", "consent", "embed", "registry", "retrieval", "schema", "tools"},
    "compose": frozenset({"registry", "schema", "tools"}),
    "providers": frozenset({"registry", "schema", "tools"}),
    "channels": frozenset({"consent", "memory", "tools"}),
    "sources": frozenset({"memory", "tools"}),  # the file tools over memory.sources
    "builtin": frozenset({"channels", "embed", "memory", "registry", "schema", "tools"}),
    "toolkit": frozenset({"memory", "registry", "tools"}),
    "mcp": frozenset({"builtin", "consent", "memory", "registry", "schema", "tools"}),
    # toolkit: the agent asks it for reminders (issue 29 item 9 makes that a hook)
    "agent": frozenset(
        {
            "builtin",
            "channels",
            "consent",
            "memory",
            "providers",
            "registry",
            "rules",
            "schema",
            "tools",
            "toolkit",
        }
    ),
    "console": STORAGE | {"consent", "memory"},
    "agentfile": frozenset({"memory", "rules"}),  # Letta Agent Files (issue 31 item 1)
    "serve": STORAGE
    | {
        "agent",
        "builtin",
        "channels",
        "compat",
        "compose",
        "consent",
        "console",
        "embed",
        "mcp",
        "memory",
        "meta",
        "registry",
        "rules",
        "schema",
        "sources",
        "tools",
        "toolkit",
    },
    # satchel up: the host of an agent on inbound channels, its ledger in the database
    "up": STORAGE | {"agent", "channels", "toolkit"},
    "examples": frozenset({"registry", "tools"}),
    "satchel": frozenset({"agent", "compose", "consent", "memory", "meta", "registry", "tools"}),
}
ALLOWED["cli"] = frozenset(ALLOWED) - {"cli", "satchel", "examples"}
ALLOWED["__main__"] = frozenset({"cli"})

EXCEPTIONS: dict[tuple[str, str], str] = {
    ("registry/_registry.py", "mcp"): "ToolRegistry.mount_mcp, deprecated (issue 29 item 2)",
}
"""Arrows the table does not allow but the code still has, each with its way out:
(file under src/satchel, the package it imports)."""


@dataclass(frozen=True)
class Arrow:
    """One import of one satchel package by another."""

    path: str
    line: int
    source: str
    target: str

    def __str__(self) -> str:
        return f"src/satchel/{self.path}:{self.line}: {self.source} -> {self.target}"


def _unit(dotted: str) -> str:
    """The package (or top-level module) a ``satchel...`` module belongs to."""
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else "satchel"


def _is_module(dotted: str) -> bool:
    path = SRC.parent.joinpath(*dotted.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every ``satchel`` module ``path`` imports, with its line, wherever it is."""
    relative = path.relative_to(SRC.parent).with_suffix("")
    package = list(relative.parts if path.name == "__init__.py" else relative.parts[:-1])
    if path.name == "__init__.py":
        package = package[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module == "satchel":  # ``from satchel import memory`` names a subpackage
                for alias in node.names:
                    submodule = f"satchel.{alias.name}"
                    yield node.lineno, submodule if _is_module(submodule) else module
            else:
                yield node.lineno, module


def arrows() -> list[Arrow]:
    """Every import from one satchel package into another, in ``src/satchel``."""
    found: list[Arrow] = []
    for path in sorted(SRC.rglob("*.py")):
        source = _source(path)
        for line, module in _imports(path):
            if module != "satchel" and not module.startswith("satchel."):
                continue
            target = _unit(module)
            if target != source:
                found.append(Arrow(str(path.relative_to(SRC)), line, source, target))
    return found


def test_every_import_between_packages_is_an_arrow_the_table_allows() -> None:
    found = arrows()
    assert any(a.source == "memory" and a.target == "retrieval" for a in found)  # it reads
    assert any(a.path.startswith("tools/") for a in found)
    wrong = [
        str(a)
        for a in found
        if a.target not in ALLOWED.get(a.source, frozenset()) | BASE
        and (a.path, a.target) not in EXCEPTIONS
    ]
    assert wrong == [], (
        "imports against the layering (tests/test_layers.py ALLOWED):\n" + "\n".join(wrong)
    )


def _source(path: Path) -> str:
    relative = path.relative_to(SRC.parent).with_suffix("")
    return _unit(".".join(relative.parts[:-1] if path.name == "__init__.py" else relative.parts))


def test_every_package_is_in_the_table() -> None:
    units = {_source(path) for path in SRC.rglob("*.py")}
    assert {"satchel", "tools"} <= units
    assert units - set(ALLOWED) == set()


def test_the_base_modules_import_only_each_other() -> None:
    for unit in BASE:
        assert ALLOWED[unit] <= BASE


def test_the_table_has_no_cycle_so_every_package_is_below_what_it_serves() -> None:
    order: list[str] = []
    remaining = {
        unit: set(deps if unit in BASE else deps | BASE) - {unit} for unit, deps in ALLOWED.items()
    }
    while remaining:
        ready = sorted(unit for unit, deps in remaining.items() if not deps - set(order))
        assert ready, f"a cycle among {sorted(remaining)}"
        order += ready
        for unit in ready:
            del remaining[unit]
    assert order.index("tools") < order.index("memory") < order.index("builtin")
    assert order.index("channels") < order.index("builtin") < order.index("agent")


def test_every_exception_is_still_needed() -> None:
    present = {(a.path, a.target) for a in arrows()}
    assert set(EXCEPTIONS) <= present, set(EXCEPTIONS) - present


def test_importing_satchel_loads_no_postgresql_driver() -> None:
    code = (
        "import satchel, satchel.cli, sys; print(sorted(m for m in sys.modules if 'psycopg' in m))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_layers_below_mcp_load_no_mcp_sdk() -> None:
    code = (
        "import satchel, satchel.registry, satchel.memory, satchel.consent, satchel.meta, sys; "
        "print(sorted(m for m in sys.modules "
        "if m == 'mcp' or m.startswith(('mcp.', 'satchel.mcp'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
