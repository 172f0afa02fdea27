"""docs/memory.md's example is real code: it runs and prints what it shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "memory.md"


def test_the_memory_docs_example_runs(tmp_path: Path) -> None:
    # The built-in tools' example: the block that stores Sam's cat.
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    code = [block for block in blocks if "Sam's cat is Miso." in block]
    assert len(code) == 1
    script = tmp_path / "example.py"
    script.write_text(code[0])

    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    ).stdout

    assert out.startswith("Sam's cat is Miso.\n")
    assert '<block label="human" chars="20/2000" permission="read_write">' in out
    assert "- send_message: When send_message is called, the turn ends." in out
