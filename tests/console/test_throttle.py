"""Wrong tokens slow a client down: the login page and bearer tokens stop answering it
after a few, for a while, and a right token clears its record."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from satchel.consent import PermissionBroker, SQLiteApprovalStore
from satchel.console import console_app
from satchel.console._throttle import MAX_FAILURES, LoginThrottle
from satchel.memory import SQLiteStore

from .conftest import seed

pytestmark = pytest.mark.anyio


async def test_too_many_wrong_tokens_lock_the_client_out_even_with_the_right_one(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    store = SQLiteStore(db, embedder=None)
    await seed(store)
    broker = PermissionBroker(SQLiteApprovalStore(db))
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
    await store.close()
    await broker.close()


async def test_wrong_bearer_tokens_count_and_a_login_cookie_still_works(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    store = SQLiteStore(db, embedder=None)
    await seed(store)
    broker = PermissionBroker(SQLiteApprovalStore(db))
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
    await store.close()
    await broker.close()


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
