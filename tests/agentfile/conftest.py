"""Fixtures for the agent file tests: the memory stores of both backends (from
``tests/memory/conftest.py``) and the shared Letta Agent Files."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.conftest import (  # noqa: F401 (fixtures, used by name)
    HashEmbedder,
    make_store,
    postgres_database_pool,
    postgres_databases,
    postgres_template,
    store,
)

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "letta-agent-files"
SHARED_FILES = sorted(SHARED.glob("*.af")) if SHARED.is_dir() else []

__all__ = ["SHARED", "SHARED_FILES", "HashEmbedder", "shared_file"]


def shared_file(name: str) -> Path:
    """One shared file; the test is skipped, with the reason, when the folder is absent."""
    path = SHARED / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (the shared data folder beside the checkout)")
    return path
