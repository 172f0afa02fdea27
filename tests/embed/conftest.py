"""Fixtures for the embedder tests: one real model, loaded once per test session."""

from __future__ import annotations

import pytest

from satchel.embed import MiniLMEmbedder


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()
