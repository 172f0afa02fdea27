"""Shared by the toolkit benchmarks: the whole productivity toolkit on a throw-away data
dir (local calendar, local Maildir when the mail tools are in this build) and a
throw-away memory database (for the agent's reminders and tracked tasks)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from satchel import ToolRegistry
from satchel.memory import SQLiteStore
from satchel.toolkit import ToolkitConfig, productivity_toolkit


async def whole_toolkit() -> tuple[ToolRegistry, bool]:
    """The toolkit's registry, and whether it holds the mail tools."""
    root = Path(tempfile.mkdtemp(prefix="satchel-toolkit-bench-"))
    store = await SQLiteStore.open(root / "memory.db", embedder=None)
    config = ToolkitConfig(data_dir=root, timezone="Europe/Paris")
    tools = productivity_toolkit(config, store=store)
    return tools, "send_email" in tools
