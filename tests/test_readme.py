"""The README's example is real code: it runs and prints what it promises."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(tmp_path: Path) -> None:
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S)
    assert code is not None
    script = tmp_path / "example.py"
    script.write_text(code.group(1))
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
    )
    assert "True 5" in out.stdout
    assert "Error (invalid_arguments)" in out.stdout


def test_readme_shows_the_two_setup_commands() -> None:
    text = README.read_text()
    assert "uv run satchel" in text
    assert "uv run pytest" in text
