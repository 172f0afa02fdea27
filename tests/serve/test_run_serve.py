"""A program does what ``satchel serve`` does through :mod:`satchel.serve`: one
``ServeOptions``, ``run_serve``, and the errors of a bad option naming it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from satchel import SatchelUsageError, ToolRegistry
from satchel.examples import registry as examples
from satchel.serve import ServeOptions, build_catalog, run_serve

TOKEN = "s3cret-token-for-the-test"


@asynccontextmanager
async def _http(url: str, token: str) -> AsyncIterator[Any]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


@pytest.mark.anyio
async def test_a_program_serves_memory_and_its_own_registry_over_http(tmp_path: Path) -> None:
    urls: list[str | None] = []
    ready = anyio.Event()

    def on_ready(url: str | None) -> None:
        urls.append(url)
        ready.set()

    options = ServeOptions(
        db=tmp_path / "memory.db",
        agent="ada",
        tools=(examples,),  # a registry object, not only a MODULE:ATTR target
        http=("127.0.0.1", 0),
        token=TOKEN,
        console=False,
        on_ready=on_ready,
    )
    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            group.start_soon(run_serve, options)
            await ready.wait()
            url = urls[0]
            assert url is not None
            async with Client(_http(url, TOKEN)) as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                listed = await client.call_tool("context", {"operation": "list"})
            group.cancel_scope.cancel()

    assert names == ["context", "recall", "search", "send_message", *examples.names()]
    assert not listed.is_error
    assert "persona" in str(listed.content)
    assert (tmp_path / "memory.db").is_file()


@pytest.mark.anyio
async def test_a_pin_the_catalog_lacks_is_a_usage_error_naming_the_option(
    tmp_path: Path,
) -> None:
    options = ServeOptions(db=tmp_path / "memory.db", lazy=True, pins=("nowhere",), memory=False)

    with anyio.fail_after(120), pytest.raises(SatchelUsageError) as caught:
        await run_serve(options)

    assert caught.value.details == {"option": "--pin"}
    assert "no tool called 'nowhere' to pin" in caught.value.message


def test_a_database_in_a_missing_folder_is_refused_before_anything_opens(
    tmp_path: Path,
) -> None:
    options = ServeOptions(db=tmp_path / "no" / "such" / "memory.db")

    with pytest.raises(SatchelUsageError) as caught:
        anyio.run(run_serve, options)

    assert caught.value.details == {"option": "--db"}
    assert not (tmp_path / "no").exists()


def test_two_registry_objects_defining_one_name_are_named_by_their_place() -> None:
    other = ToolRegistry()
    other.register_raw(
        name="add",
        description="Adds nothing.",
        parameters={"type": "object", "properties": {}},
        run=lambda args: "0",
    )

    with pytest.raises(
        SatchelUsageError, match=r"'add' is defined by both tools\[0\] and tools\[1\]"
    ):
        build_catalog(ServeOptions(tools=(examples, other)))
