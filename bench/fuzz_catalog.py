"""The catalog ``fuzz_soak.py`` puts behind the meta-tools: GitHub's MCP server's 117
real tools (``shared/data/mcp-catalogs``) as raw tools that answer ``ok``.

``satchel serve --tools fuzz_catalog:catalog`` loads it (with ``bench/`` on
``PYTHONPATH``).
"""

from __future__ import annotations

from meta_common import data_dir, load_catalog

from satchel import ToolRegistry

__all__ = ["catalog"]


def catalog() -> ToolRegistry:
    """A registry of the GitHub MCP server's tools."""
    registry = ToolRegistry()
    load_catalog(registry, data_dir() / "mcp-catalogs" / "github-mcp-server.tools.json")
    return registry
