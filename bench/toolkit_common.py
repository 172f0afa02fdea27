"""Shared by the toolkit benchmarks: the whole productivity toolkit on a throw-away data
dir (local calendar, local Maildir when the mail tools are in this build)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from satchel import ToolRegistry
from satchel.toolkit import ToolkitConfig, productivity_toolkit


def whole_toolkit() -> tuple[ToolRegistry, bool]:
    """The toolkit's registry, and whether it holds the mail tools."""
    root = Path(tempfile.mkdtemp(prefix="satchel-toolkit-bench-"))
    tools = productivity_toolkit(ToolkitConfig(data_dir=root, timezone="Europe/Paris"))
    return tools, "send_email" in tools
