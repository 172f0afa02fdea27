"""The memory tools load the embedding model with progress reports only for a caller
that asked for progress; other calls are unchanged."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from satchel.builtin import memory_toolset
from satchel.embed import MiniLMEmbedder
from satchel.embed._quantize import BUILD_MESSAGE, CACHE_ENV_VAR
from satchel.memory import SQLiteStore
from satchel.tools import ToolContext

pytestmark = pytest.mark.anyio

LIST = {"operation": "list"}


async def test_a_call_without_a_progress_hook_does_not_load_the_model(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder()
    async with SQLiteStore(tmp_path / "m.db", embedder=embedder) as store:
        tools = memory_toolset(store)
        with anyio.fail_after(30):
            result = await tools.call("context", LIST, ToolContext(agent="ada"))

    assert result.error is None
    assert embedder.loaded is False


async def test_a_call_with_a_progress_hook_loads_the_model_first_reporting_the_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV_VAR, str(tmp_path / "cache"))
    embedder = MiniLMEmbedder(quantize=True)
    reports: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None = None, message: str | None = None) -> None:
        reports.append((done, total, message))

    async with SQLiteStore(tmp_path / "m.db", embedder=embedder) as store:
        tools = memory_toolset(store)
        ctx = ToolContext(agent="ada", progress=progress)
        with anyio.fail_after(120):
            first = await tools.call("context", LIST, ctx)
            second = await tools.call("context", LIST, ctx)

    assert first.error is None
    assert second.error is None
    assert embedder.loaded is True
    assert reports == [(0, 1, BUILD_MESSAGE), (1, 1, "the embedding model is ready")]
