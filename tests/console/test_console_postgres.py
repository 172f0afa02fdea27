"""The console on a PostgreSQL store (the embedded server), over HTTP with Starlette's
test client: the agents list, an agent's page (paged), a block edit with its history
and diff, search with filters, the timeline and the approvals inbox.

The store and the broker hold pools of asyncio connections, so they are opened on the
test client's own event loop (its portal) and every check on them runs there too
(:meth:`PgSite.call`); the console app is bound to them once they are open.
"""

from __future__ import annotations

import html
import re
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from typing import Any, TypeVar

import pytest
from markupsafe import escape
from starlette.applications import Starlette
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Receive, Scope, Send

from postgres_server import PostgresServer
from satchel.consent import ConsentScope, PermissionBroker, PostgresApprovalStore
from satchel.console import console_app
from satchel.memory import BlockKind, MemoryStore, Permission
from satchel.memory.postgres import PostgresStore

from .conftest import HOSTILE, seed

pytestmark = pytest.mark.postgres

_T = TypeVar("_T")


class _Bound:
    """An ASGI app whose inner app is set once the store it needs is open; until then
    it answers the test client's lifespan messages."""

    def __init__(self) -> None:
        self.inner: ASGIApp = Starlette()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.inner(scope, receive, send)


class PgSite:
    """The console under the test client, on a PostgreSQL store and broker."""

    def __init__(self, client: TestClient, store: MemoryStore, broker: PermissionBroker) -> None:
        self.client, self.store, self.broker = client, store, broker

    def call(self, function: Callable[..., Awaitable[_T]], *args: Any, **kwargs: Any) -> _T:
        """Run ``function`` on the loop the store's connections belong to."""
        assert self.client.portal is not None
        return self.client.portal.call(partial(function, *args, **kwargs))

    def csrf(self, path: str = "/agents") -> str:
        page = self.client.get(path)
        found = re.search(r'"X-CSRF-Token": "([0-9a-f]+)"', page.text)
        assert found is not None, page.text
        return found.group(1)

    def edit_form(self, label: str, **fields: str) -> dict[str, str]:
        block = self.client.get(f"/agents/ada/blocks/{label}")
        version = re.search(r'name="version" value="(\d+)"', block.text)
        assert version is not None, block.text
        form = {
            "csrf": self.csrf(),
            "value": "",
            "description": "",
            "permission": "read_write",
            "char_limit": "",
            "version": version.group(1),
        }
        form.update(fields)
        return form


@pytest.fixture
def pg_site(postgres_server: PostgresServer) -> Iterator[PgSite]:
    url = postgres_server.create_database()
    bound = _Bound()
    try:
        with TestClient(bound, base_url="http://127.0.0.1") as client:
            assert client.portal is not None
            store = client.portal.call(partial(PostgresStore.open, url, embedder=None))
            broker = PermissionBroker(PostgresApprovalStore(url))
            try:
                client.portal.call(seed, store)
                client.portal.call(broker.__aenter__)
                bound.inner = console_app(store, broker)
                yield PgSite(client, store, broker)
            finally:
                client.portal.call(broker.close)
                client.portal.call(store.close)
    finally:
        postgres_server.drop_database(url)


def test_the_agents_list_shows_each_agent_with_its_counts(pg_site: PgSite) -> None:
    pg_site.call(pg_site.store.create_block, "bo", "persona", "I am Bo.")
    page = pg_site.client.get("/agents")
    assert page.status_code == 200
    names = re.findall(r'class="agent-link" href="[^"]*">([^<]+)</a>', page.text)
    assert names == ["ada", "bo"]
    cells = re.search(r">ada</a></td>\s*<td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>", page.text)
    assert cells is not None
    [ada] = pg_site.call(pg_site.store.describe_agents, "ada")
    assert tuple(int(c) for c in cells.groups()) == (ada.blocks, ada.archival, ada.messages)
    assert (ada.archival, ada.messages) == (2, 2)


def test_the_agent_page_lists_its_blocks_a_page_at_a_time(pg_site: PgSite) -> None:
    first = pg_site.client.get("/agents/ada")
    assert first.status_code == 200
    labels = re.findall(r'class="block-row" data-label="([^"]+)"', first.text)
    assert labels == ["human", "notes", "persona"]
    assert "<script>window" not in first.text
    for n in range(100):
        pg_site.call(pg_site.store.create_block, "ada", f"fact{n:03d}", f"fact {n}")
    pg_site.call(pg_site.store.create_block, "bo", "plans", "shared", kind=BlockKind.WORKING)
    pg_site.call(pg_site.store.share_block, "bo", "plans", "ada", Permission.READ_ONLY)
    one = pg_site.client.get("/agents/ada")
    two = pg_site.client.get("/agents/ada?page=2")
    assert one.text.count('class="block-row"') == 100
    assert re.findall(r'class="block-row" data-label="([^"]+)"', two.text) == [
        "human",
        "notes",
        "persona",
        "plans",
    ]
    assert "bo/plans" in two.text
    assert "104 blocks in context, page 2 of 2" in two.text
    assert pg_site.client.get("/agents/ada?page=3").status_code == 422


def test_an_edit_on_postgres_keeps_history_and_shows_a_diff(pg_site: PgSite) -> None:
    saved = pg_site.client.post(
        "/agents/ada/blocks/notes",
        data=pg_site.edit_form(
            "notes", value="Short notes.\nBea is Ada's sister.", char_limit="60"
        ),
    )
    assert saved.status_code == 200
    assert "Saved" in saved.text
    pg_site.client.post(
        "/agents/ada/blocks/notes",
        data=pg_site.edit_form("notes", value="Bea is Ada's sister.", char_limit="60"),
    )
    block = pg_site.call(pg_site.store.get_block, "ada", "notes")
    assert (block.value, block.char_limit) == ("Bea is Ada's sister.", 60)
    page = pg_site.client.get("/agents/ada/blocks/notes")
    versions = re.findall(r'class="version-row" data-version="(\d+)"', page.text)
    assert [int(v) for v in versions] == list(range(block.version, 0, -1))
    diff = re.search(r'<div class="diff" id="diff">(.*?)</div>', page.text, re.S)
    assert diff is not None
    assert '<span class="del">-Short notes.</span>' in diff.group(1)
    first = pg_site.client.get(f"/agents/ada/blocks/notes?a=1&b={block.version}")
    assert "+Bea is Ada&#39;s sister." in first.text
    assert "-# char_limit: 14" in first.text
    too_long = pg_site.client.post(
        "/agents/ada/blocks/notes", data=pg_site.edit_form("notes", value="x" * 80, char_limit="60")
    )
    assert too_long.status_code == 422
    assert pg_site.call(pg_site.store.get_block, "ada", "notes").value == block.value


def test_a_stored_script_and_a_nul_are_text_on_postgres(pg_site: PgSite) -> None:
    page = pg_site.client.get("/agents/ada/blocks/human")
    assert str(escape(HOSTILE)) in page.text
    assert "<script>window" not in page.text
    saved = pg_site.client.post(
        "/agents/ada/blocks/notes", data=pg_site.edit_form("notes", value="a\x00b")
    )
    assert saved.status_code == 200
    assert pg_site.call(pg_site.store.get_block, "ada", "notes").value == "a\x00b"
    shown = pg_site.client.get("/agents/ada/blocks/notes")
    assert shown.status_code == 200


def test_search_on_postgres_finds_archival_and_conversations_with_filters(
    pg_site: PgSite,
) -> None:
    both = pg_site.client.get("/agents/ada/search?q=kyoto")
    assert both.status_code == 200
    assert both.text.count('class="hit"') == 3
    archival = pg_site.client.get("/agents/ada/search?q=kyoto&domain=archival")
    assert archival.text.count('class="hit"') == 1
    assert "Kyoto in April" in archival.text
    users = pg_site.client.get("/agents/ada/search?q=kyoto&domain=conversations&role=user")
    assert users.text.count('class="hit"') == 1
    assert "ryokan in Kyoto" in users.text
    tagged = pg_site.client.get("/agents/ada/search?q=cello+kyoto&tags=music")
    assert tagged.text.count('class="hit"') == 1
    dated = pg_site.client.get("/agents/ada/search?q=kyoto&since=2001-01-01&until=2001-01-02")
    assert dated.text.count('class="hit"') == 0
    bad = pg_site.client.get("/agents/ada/search?q=kyoto&role=robot")
    assert bad.status_code == 422


def test_the_timeline_on_postgres_shows_a_days_messages(pg_site: PgSite) -> None:
    page = pg_site.client.get("/agents/ada/timeline")
    assert "Book me a ryokan in Kyoto." in page.text
    empty = pg_site.client.get("/agents/ada/timeline?day=2001-01-01")
    assert 'id="no-messages"' in empty.text


def test_the_inbox_on_postgres_lists_and_decides_requests(pg_site: PgSite) -> None:
    asked = []
    for path in ("a.txt", "b.txt", "c.txt", "d.txt"):
        scope = ConsentScope.tool_execution("delete_file", {"path": path}, agent="ada")
        asked.append(
            pg_site.call(
                pg_site.broker.request,
                scope,
                f"delete {path}",
                "mcp",
                arguments={"path": path},
                wait=False,
            )
        )
    inbox = pg_site.client.get("/approvals")
    assert inbox.status_code == 200
    assert all(f'id="request-{r.id}"' in inbox.text for r in asked)
    assert '"path": "a.txt"' in html.unescape(inbox.text)
    csrf = pg_site.csrf()
    choices = [("once", ""), ("for", "1h"), ("scope", ""), ("deny", "")]
    for request, (decision, duration) in zip(asked, choices, strict=True):
        answer = pg_site.client.post(
            f"/approvals/{request.id}",
            data={"csrf": csrf, "decision": decision, "duration": duration},
        )
        assert answer.status_code == 200, answer.text
    decided = [pg_site.call(pg_site.broker.get, r.id) for r in asked]
    assert [d.decision.kind for d in decided if d and d.decision] == [
        "approve_once",
        "approve_for",
        "approve_scope",
        "deny",
    ]
    again = pg_site.client.post(
        f"/approvals/{asked[0].id}", data={"csrf": csrf, "decision": "deny"}
    )
    assert again.status_code == 409
    listed = pg_site.client.get("/approvals")
    outcomes = re.findall(r'<td class="outcome">([^<]+)</td>', listed.text)
    assert sorted(o.split(" (")[1].split(")")[0].split(" ")[0] for o in outcomes) == [
        "approve_for",
        "approve_once",
        "approve_scope",
        "deny",
    ]


def test_an_unknown_agent_or_block_on_postgres_is_a_404_page(pg_site: PgSite) -> None:
    for path in ("/agents/nobody", "/agents/ada/blocks/nothing"):
        page = pg_site.client.get(path)
        assert page.status_code == 404, path


def test_create_archive_load_delete_and_reimport_on_postgres(pg_site: PgSite) -> None:
    csrf = pg_site.csrf()
    made = pg_site.client.post(
        "/agents/ada/blocks",
        data={"csrf": csrf, "label": "plans", "value": "Learn Go.", "char_limit": "100"},
    )
    assert made.status_code == 200
    assert pg_site.call(pg_site.store.get_block, "ada", "plans").char_limit == 100
    twice = pg_site.client.post(
        "/agents/ada/blocks", data={"csrf": csrf, "label": "plans", "value": "again"}
    )
    assert twice.status_code == 409
    pg_site.client.post("/agents/ada/blocks/plans/move", data={"csrf": csrf, "action": "archive"})
    assert pg_site.call(pg_site.store.get_block, "ada", "plans").kind is BlockKind.ARCHIVAL
    pg_site.client.post("/agents/ada/blocks/plans/move", data={"csrf": csrf, "action": "load"})
    block = pg_site.call(pg_site.store.get_block, "ada", "plans")
    assert block.kind is BlockKind.WORKING
    exported = pg_site.client.get("/agents/ada/export")
    assert exported.status_code == 200
    assert exported.text.startswith('{"agent":"ada"')
    gone = pg_site.client.post(
        "/agents/ada/blocks/plans/delete", data={"csrf": csrf, "version": str(block.version)}
    )
    assert gone.status_code == 200
    assert "plans" not in [b.label for b in pg_site.call(pg_site.store.list_blocks, "ada")]
    imported = pg_site.client.post(
        "/agents/ada/import",
        data={"csrf": csrf, "on_conflict": "skip"},
        files={"file": ("ada.jsonl", exported.content, "application/x-ndjson")},
    )
    assert imported.status_code == 200
    again = pg_site.call(pg_site.store.get_block, "ada", "plans")
    assert (again.value, again.version, again.kind) == ("Learn Go.", block.version, block.kind)
