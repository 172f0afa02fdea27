"""Wrong tokens slow a client down: the login page and bearer tokens stop answering it
after a few, for a while, and a right token clears its record."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from starlette.testclient import TestClient

from satchel.consent import PermissionBroker, SQLiteApprovalStore
from satchel.console import console_app
from satchel.console._throttle import MAX_FAILURES, LoginThrottle
from satchel.mcp import create_server
from satchel.mcp.server._http import PathMounts, run_uvicorn
from satchel.memory import SQLiteStore
from satchel.registry import ToolRegistry

from .conftest import seed

pytestmark = pytest.mark.anyio

Opened = tuple[SQLiteStore, PermissionBroker]


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncIterator[Opened]:
    """A seeded memory store and the approval broker of the same database."""
    db = tmp_path / "m.db"
    store = SQLiteStore(db, embedder=None)
    await seed(store)
    broker = PermissionBroker(SQLiteApprovalStore(db))
    yield store, broker
    await store.close()
    await broker.close()


async def test_too_many_wrong_tokens_lock_the_client_out_even_with_the_right_one(
    opened: Opened,
) -> None:
    store, broker = opened
    app = console_app(store, broker, token="s3cret")
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as client:
        wrong = [client.post("/login", data={"token": f"guess{i}"}) for i in range(MAX_FAILURES)]
        locked = client.post("/login", data={"token": "s3cret"})
        bearer = client.get("/agents", headers={"authorization": "Bearer s3cret"})

    assert [r.status_code for r in wrong] == [401] * MAX_FAILURES
    assert locked.status_code == 429
    assert "set-cookie" not in locked.headers
    assert 0 < int(locked.headers["retry-after"]) <= 300
    assert "Too many wrong tokens" in locked.text
    assert bearer.status_code == 429


async def test_wrong_bearer_tokens_count_and_a_login_cookie_still_works(opened: Opened) -> None:
    store, broker = opened
    app = console_app(store, broker, token="s3cret")
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as client:
        assert client.post("/login", data={"token": "s3cret"}).status_code == 303
        with TestClient(app, base_url="http://127.0.0.1") as other:
            refused = [
                other.get("/agents", headers={"authorization": f"Bearer no{i}"}).status_code
                for i in range(MAX_FAILURES + 1)
            ]
        still = client.get("/agents")

    assert refused == [401] * MAX_FAILURES + [429]
    assert still.status_code == 200  # the operator's session is not locked out


def test_failures_age_out_and_a_success_clears_them() -> None:
    now = [1000.0]
    throttle = LoginThrottle(max_failures=3, window=60.0, clock=lambda: now[0])
    for _ in range(3):
        throttle.failed("10.0.0.1")
        now[0] += 1
    assert throttle.retry_after("10.0.0.1") == pytest.approx(57.0)
    assert throttle.retry_after("10.0.0.2") is None  # per client
    now[0] += 57.5
    assert throttle.retry_after("10.0.0.1") is None  # the oldest aged out
    throttle.failed("10.0.0.1")
    assert throttle.retry_after("10.0.0.1") is not None
    throttle.succeeded("10.0.0.1")
    assert throttle.retry_after("10.0.0.1") is None


async def test_concurrent_wrong_logins_are_checked_at_most_max_failures_times(
    opened: Opened,
) -> None:
    store, broker = opened
    app = console_app(store, broker, token="s3cret")
    statuses: list[int] = []
    listening: list[str] = []
    ready = anyio.Event()

    def on_ready(url: str) -> None:
        listening.append(url.removesuffix("/mcp"))
        ready.set()

    limits = httpx.Limits(max_connections=150)
    async with anyio.create_task_group() as server:  # a real server: real interleaving
        server.start_soon(lambda: run_uvicorn(app, "127.0.0.1", 0, on_ready=on_ready))
        with anyio.fail_after(30):
            await ready.wait()
        async with httpx.AsyncClient(base_url=listening[0], limits=limits) as client:
            started = 0
            all_sent = anyio.Event()

            async def guess(i: int) -> None:
                form = f"token=guess{i:03d}&next=%2F".encode()

                async def body() -> AsyncIterator[bytes]:
                    nonlocal started
                    started += 1  # this request's headers are out
                    if started == 150:
                        all_sent.set()
                    await all_sent.wait()  # every form arrives after every header
                    yield form

                answer = await client.post(
                    "/login",
                    content=body(),
                    headers={
                        "content-type": "application/x-www-form-urlencoded",
                        "content-length": str(len(form)),
                    },
                )
                statuses.append(answer.status_code)

            with anyio.fail_after(60):
                async with anyio.create_task_group() as group:
                    for i in range(150):
                        group.start_soon(guess, i)
        server.cancel_scope.cancel()

    assert statuses.count(401) <= MAX_FAILURES  # each 401 is one token compared
    assert statuses.count(429) >= 150 - MAX_FAILURES


def _mcp_and_console(store: SQLiteStore, broker: PermissionBroker) -> tuple[Any, LoginThrottle]:
    throttle = LoginThrottle()
    server = create_server(ToolRegistry())
    mcp = server.http_app(token="s3cret", throttle=throttle)
    console = console_app(store, broker, token="s3cret", throttle=throttle)
    return PathMounts(mcp, {"/console": console}), throttle


async def test_wrong_bearer_tokens_at_mcp_are_slowed_and_count_for_the_console_too(
    opened: Opened,
) -> None:
    store, broker = opened
    app, _ = _mcp_and_console(store, broker)
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as client:
        guesses = [
            client.post("/mcp", json=body, headers={"authorization": f"Bearer no{i}"})
            for i in range(400)
        ]
        login = client.post("/console/login", data={"token": "s3cret"})
        right = client.post("/mcp", json=body, headers={"authorization": "Bearer s3cret"})

    codes = [g.status_code for g in guesses]
    assert codes[:MAX_FAILURES] == [401] * MAX_FAILURES
    assert set(codes[MAX_FAILURES:]) == {429}
    assert 0 < int(guesses[-1].headers["retry-after"]) <= 300
    assert login.status_code == 429  # one limit for every entry point
    assert right.status_code == 429  # a locked-out client's tokens are not even checked


async def test_a_right_bearer_token_at_mcp_is_never_slowed(opened: Opened) -> None:
    store, broker = opened
    app, throttle = _mcp_and_console(store, broker)
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with TestClient(app, base_url="http://127.0.0.1") as client:
        codes = [
            client.post(
                "/mcp",
                json=body,
                headers={
                    "authorization": "Bearer s3cret",
                    "accept": "application/json, text/event-stream",
                },
            ).status_code
            for _ in range(3 * MAX_FAILURES)
        ]

    assert 429 not in codes
    assert 401 not in codes
    assert throttle.retry_after("testclient") is None
