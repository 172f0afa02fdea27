"""``satchel.serve`` sits below the CLI: it imports nothing from ``satchel.cli``, loads
neither typer nor the MCP SDK until it serves, and the old private module is a
deprecated re-export of it."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import satchel.serve


def test_satchel_serve_imports_nothing_from_the_cli() -> None:
    imported: set[str] = set()
    for path in Path(satchel.serve.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    assert "satchel.serve._options" in imported  # the walk saw the package's imports
    assert not {name for name in imported if name.startswith(("satchel.cli", "typer"))}


def test_importing_satchel_serve_loads_no_typer_nor_mcp_sdk() -> None:
    code = (
        "import satchel.serve, sys; print(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('typer', 'mcp') or m.startswith('satchel.cli')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_old_private_module_warns_and_re_exports_the_public_names() -> None:
    sys.modules.pop("satchel.cli._serve", None)
    with pytest.warns(DeprecationWarning, match="satchel.serve"):
        old = importlib.import_module("satchel.cli._serve")

    for name in ("ServeOptions", "MountSpec", "build_catalog", "served_registry", "memory_tools"):
        assert getattr(old, name) is getattr(satchel.serve, name)
