"""Console sessions are revocable (issue 28, item 14): each login gets a random session
id kept by the running console, logging out ends that session only, and a restart or
a new token ends them all. Over real HTTP against a real ``satchel console`` process."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import httpx
import pytest
from starlette.requests import Request

from satchel.console import Guard
from satchel.console._guard import COOKIE
from satchel.memory import SQLiteStore

from .conftest import seed
from .live import running_console

TOKEN = "T0ken-for-sessions"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"

    async def main() -> None:
        async with SQLiteStore(path, embedder=None) as store:
            await seed(store)

    anyio.run(main)
    return path


def _login(url: str) -> str:
    """Log in with the token; returns the session cookie's value."""
    with httpx.Client(base_url=url, follow_redirects=False, timeout=30) as client:
        answer = client.post("/login", data={"token": TOKEN, "next": "/agents"})
        assert answer.status_code == 303, answer.text
        cookie = client.cookies.get(COOKIE)
    assert cookie is not None
    assert TOKEN not in cookie
    return cookie


def _page(url: str, cookie: str) -> httpx.Response:
    """``/agents/ada`` with only ``cookie`` as credentials (no redirect followed)."""
    with httpx.Client(base_url=url, follow_redirects=False, timeout=30) as client:
        return client.get("/agents/ada", headers={"cookie": f"{COOKIE}={cookie}"})


def _logout(url: str, cookie: str) -> None:
    page = _page(url, cookie)
    csrf = re.search(r'"X-CSRF-Token": "([0-9a-f]+)"', page.text)
    assert csrf is not None, page.text
    with httpx.Client(base_url=url, follow_redirects=False, timeout=30) as client:
        out = client.post(
            "/logout", data={"csrf": csrf.group(1)}, headers={"cookie": f"{COOKIE}={cookie}"}
        )
    assert out.status_code == 303, out.text


@pytest.mark.slow
def test_logout_ends_only_its_session_and_a_restart_ends_every_session(db: Path) -> None:
    with running_console(db, "--token", TOKEN) as url:
        first, second = _login(url), _login(url)
        assert first != second  # a random id per login, not a value made from the token
        assert _page(url, first).status_code == 200
        assert _page(url, second).status_code == 200
        _logout(url, first)
        refused = _page(url, first)
        assert refused.status_code == 303  # the old cookie is as good as none
        assert refused.headers["location"].startswith("/login")
        with httpx.Client(base_url=url, timeout=30) as client:
            write = client.post(
                "/agents/ada/blocks/notes",
                data={"value": "x"},
                headers={"cookie": f"{COOKIE}={first}"},
            )
        assert write.status_code == 401
        assert _page(url, second).status_code == 200  # the other session lives on
    with running_console(db, "--token", TOKEN) as url:
        assert _page(url, second).status_code == 303  # a restart ends every session
        assert _page(url, _login(url)).status_code == 200


def _request(cookie: str) -> Request:
    headers = [(b"cookie", f"{COOKIE}={cookie}".encode())]
    return Request({"type": "http", "method": "GET", "path": "/", "headers": headers})


def test_a_new_token_ends_the_sessions_opened_with_the_old_one() -> None:
    guard = Guard(token="old")
    session = guard.start_session()
    assert guard.authenticated(_request(session))
    guard.token = "new"
    assert not guard.authenticated(_request(session))
    guard.token = "old"  # and it does not come back: it was ended, not paused
    assert not guard.authenticated(_request(session))


def test_a_session_ends_when_it_expires() -> None:
    guard = Guard(token="t", session_seconds=0)
    assert not guard.authenticated(_request(guard.start_session()))


def test_the_csrf_token_of_a_session_dies_with_it() -> None:
    guard = Guard(token="t")
    one, two = guard.start_session(), guard.start_session()
    assert guard.csrf_token(_request(one)) != guard.csrf_token(_request(two))
    bearer = guard.csrf_token(_request(one))
    guard.end_session(_request(one))
    assert guard.csrf_token(_request(one)) != bearer


def test_session_value_is_deprecated_and_authenticates_nothing() -> None:
    guard = Guard(token="t")
    with pytest.warns(DeprecationWarning, match="session_value is deprecated"):
        value = guard.session_value
    assert not guard.authenticated(_request(value))
