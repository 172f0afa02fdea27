"""The layers point one way: importing satchel loads neither PostgreSQL's driver nor
the MCP SDK until they are used."""

from __future__ import annotations

import subprocess
import sys


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
