from __future__ import annotations

import pytest

from satchel.examples import build_registry
from satchel.registry import ToolRegistry


@pytest.fixture
def registry() -> ToolRegistry:
    """A fresh demo registry: word_count, add, notes (delete is destructive), echo."""
    return build_registry()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
