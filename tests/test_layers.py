"""The layers point one way: importing satchel loads neither PostgreSQL's driver nor
the MCP SDK until they are used, and the shared retrieval package depends on none of
the layers built on it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import satchel


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


def test_retrieval_imports_nothing_from_the_layers_that_use_it() -> None:
    # memory and the meta-tools build on satchel.retrieval; it must not build on them.
    source = Path(satchel.__file__).parent / "retrieval"
    above = ("satchel.memory", "satchel.meta", "satchel.mcp", "satchel.cli", "satchel.builtin")
    imported: set[str] = set()
    for path in source.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    assert "satchel.retrieval._hybrid" in imported  # the walk saw the package's imports
    assert not {name for name in imported if name.startswith(above)}
