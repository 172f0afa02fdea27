"""The console over HTTP (Starlette's test client on a real SQLite file): writes need
the CSRF token, a token needs a login, bad input gets a clear error page and loses
nothing, and every stored value is escaped."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import escape
from starlette.testclient import TestClient

from satchel.consent import ConsentScope, PermissionBroker, SQLiteApprovalStore
from satchel.console import console_app
from satchel.memory import Permission, SQLiteStore

from .conftest import HOSTILE, Site, seed

pytestmark = pytest.mark.anyio


def _edit(site: Site, label: str, **fields: str) -> dict[str, str]:
    block = site.client.get(f"/agents/ada/blocks/{label}")
    version = re.search(r'name="version" value="(\d+)"', block.text)
    assert version is not None
    form = {
        "csrf": site.csrf(),
        "value": "",
        "description": "",
        "permission": "read_write",
        "char_limit": "",
        "version": version.group(1),
    }
    form.update(fields)
    return form


async def test_a_write_without_the_csrf_token_is_refused_and_changes_nothing(site: Site) -> None:
    form = _edit(site, "notes", value="changed")
    del form["csrf"]
    refused = site.client.post("/agents/ada/blocks/notes", data=form)
    wrong = site.client.post("/agents/ada/blocks/notes", data={**form, "csrf": "0" * 64})
    assert refused.status_code == wrong.status_code == 403
    assert "CSRF" in refused.text
    assert (await site.store.get_block("ada", "notes")).value == "Short notes."


async def test_a_write_from_another_origin_is_refused(site: Site) -> None:
    form = _edit(site, "notes", value="changed")
    refused = site.client.post(
        "/agents/ada/blocks/notes", data=form, headers={"origin": "http://evil.example"}
    )
    assert refused.status_code == 403
    assert (await site.store.get_block("ada", "notes")).value == "Short notes."


async def test_every_post_route_checks_the_csrf_token(site: Site) -> None:
    posts = [
        "/agents/ada/blocks",
        "/agents/ada/blocks/notes",
        "/agents/ada/blocks/notes/move",
        "/agents/ada/blocks/notes/delete",
        "/agents/ada/import",
        "/approvals/ap_x",
        "/logout",
    ]
    statuses = {
        path: site.client.post(path, data={"action": "archive"}).status_code for path in posts
    }
    assert set(statuses.values()) == {403}, statuses
    assert (await site.store.get_block("ada", "notes")).kind.value == "core"


async def test_the_operator_edits_value_description_permission_and_limit(site: Site) -> None:
    form = _edit(
        site,
        "notes",
        value="Ada's sister is Bea.",
        description="Family",
        permission="read_only",
        char_limit="40",
    )
    saved = site.client.post("/agents/ada/blocks/notes", data=form)
    assert saved.status_code == 200
    assert "Saved" in saved.text
    block = await site.store.get_block("ada", "notes")
    assert (block.value, block.description, block.permission, block.char_limit) == (
        "Ada's sister is Bea.",
        "Family",
        Permission.READ_ONLY,
        40,
    )
    # a read-only block is still the operator's to edit
    again = site.client.post(
        "/agents/ada/blocks/notes",
        data=_edit(site, "notes", value="Bea.", permission="read_only", char_limit="40"),
    )
    assert again.status_code == 200
    block = await site.store.get_block("ada", "notes")
    assert (block.value, block.permission) == ("Bea.", Permission.READ_ONLY)


@pytest.mark.parametrize(
    ("fields", "status", "words"),
    [
        ({"value": "x" * 50, "char_limit": "20"}, 422, "over the limit of 20"),
        ({"value": "ok", "char_limit": "twelve"}, 422, "whole number"),
        ({"value": "ok", "char_limit": "-3"}, 422, "must not be negative"),
        ({"value": "ok", "permission": "root"}, 422, "is not a permission"),
        ({"value": "ok", "version": "0"}, 409, "changed while you edited it"),
        ({"value": "y" * 1_000_001}, 422, "at most 1000000"),
    ],
)
async def test_a_bad_edit_gets_a_clear_error_and_keeps_both_the_block_and_the_typed_text(
    site: Site, fields: dict[str, str], status: int, words: str
) -> None:
    before = await site.store.get_block("ada", "notes")
    form = _edit(site, "notes", **{"char_limit": "20", **fields})
    answer = site.client.post("/agents/ada/blocks/notes", data=form)
    assert answer.status_code == status
    assert words in html.unescape(answer.text)
    if len(fields["value"]) < 1000:  # what was typed comes back in the form
        assert f">{fields['value']}</textarea>" in answer.text
    assert await site.store.get_block("ada", "notes") == before


async def test_unknown_agents_and_blocks_are_404_pages(site: Site) -> None:
    for path in ("/agents/nobody", "/agents/ada/blocks/nothing", "/agents/nobody/search?q=x"):
        page = site.client.get(path)
        assert page.status_code == 404, path
        assert "404" in page.text
    posted = site.client.post(
        "/agents/ada/blocks/nothing", data={**_edit(site, "notes"), "value": "x"}
    )
    assert posted.status_code == 404


async def test_bad_search_filters_are_clear_errors(site: Site) -> None:
    bad = {
        "role=robot": "not a role",
        "since=yesterday": "must be a date",
        "since=2026-02-02&until=2026-01-01": "ends before it starts",
        "page=0": "page must be",
        "domain=web": "not a domain",
    }
    for query, words in bad.items():
        page = site.client.get(f"/agents/ada/search?q=kyoto&{query}")
        assert page.status_code == 422, query
        assert words in page.text, query


async def test_search_finds_archival_and_conversations_with_filters(site: Site) -> None:
    both = site.client.get("/agents/ada/search?q=kyoto")
    assert both.text.count('class="hit"') == 3
    archival = site.client.get("/agents/ada/search?q=kyoto&domain=archival")
    assert archival.text.count('class="hit"') == 1
    assert "Kyoto in April" in archival.text
    users = site.client.get("/agents/ada/search?q=kyoto&domain=conversations&role=user")
    assert users.text.count('class="hit"') == 1
    assert "ryokan in Kyoto" in users.text
    tagged = site.client.get("/agents/ada/search?q=cello+kyoto&tags=music")
    assert tagged.text.count('class="hit"') == 1


async def test_create_archive_load_and_delete_with_confirmation(site: Site) -> None:
    csrf = site.csrf()
    made = site.client.post(
        "/agents/ada/blocks",
        data={
            "csrf": csrf,
            "label": "plans",
            "value": "Learn Go.",
            "kind": "core",
            "permission": "read_write",
            "char_limit": "100",
            "description": "Goals",
        },
    )
    assert made.status_code == 200
    assert (await site.store.get_block("ada", "plans")).char_limit == 100
    twice = site.client.post(
        "/agents/ada/blocks", data={"csrf": csrf, "label": "plans", "value": "again"}
    )
    assert twice.status_code == 409
    assert (await site.store.get_block("ada", "plans")).value == "Learn Go."
    site.client.post("/agents/ada/blocks/plans/move", data={"csrf": csrf, "action": "archive"})
    assert (await site.store.get_block("ada", "plans")).kind.value == "archival"
    site.client.post("/agents/ada/blocks/plans/move", data={"csrf": csrf, "action": "load"})
    block = await site.store.get_block("ada", "plans")
    assert block.kind.value == "working"
    confirm = site.client.get("/agents/ada/blocks/plans/delete")
    assert "Delete it" in confirm.text
    stale = site.client.post(
        "/agents/ada/blocks/plans/delete", data={"csrf": csrf, "version": str(block.version - 1)}
    )
    assert stale.status_code == 409
    gone = site.client.post(
        "/agents/ada/blocks/plans/delete", data={"csrf": csrf, "version": str(block.version)}
    )
    assert gone.status_code == 200
    assert "plans" not in [b.label for b in await site.store.list_blocks("ada")]


async def test_the_inbox_lists_a_pending_request_and_records_each_decision(site: Site) -> None:
    asked = []
    for path in ("a.txt", "b.txt", "c.txt", "d.txt"):
        scope = ConsentScope.tool_execution("delete_file", {"path": path}, agent="ada")
        asked.append(
            await site.broker.request(
                scope, f"delete {path}", "mcp", arguments={"path": path}, wait=False
            )
        )
    inbox = site.client.get("/approvals")
    assert all(f'id="request-{r.id}"' in inbox.text for r in asked)
    assert "&#34;path&#34;: &#34;a.txt&#34;" in inbox.text or '"path": "a.txt"' in html.unescape(
        inbox.text
    )
    csrf = site.csrf()
    choices = [("once", ""), ("for", "1h"), ("scope", ""), ("deny", "")]
    for request, (decision, duration) in zip(asked, choices, strict=True):
        answer = site.client.post(
            f"/approvals/{request.id}",
            data={"csrf": csrf, "decision": decision, "duration": duration},
        )
        assert answer.status_code == 200
    kinds = [(await site.broker.get(r.id)) for r in asked]
    assert [k.decision.kind for k in kinds if k and k.decision] == [
        "approve_once",
        "approve_for",
        "approve_scope",
        "deny",
    ]
    again = site.client.post(f"/approvals/{asked[0].id}", data={"csrf": csrf, "decision": "deny"})
    assert again.status_code == 409
    assert "already approved" in again.text
    bad = site.client.post(f"/approvals/{asked[0].id}", data={"csrf": csrf, "decision": "maybe"})
    assert bad.status_code == 422


async def test_export_then_import_restores_a_deleted_block(site: Site) -> None:
    exported = site.client.get("/agents/ada/export")
    assert exported.status_code == 200
    assert exported.text.startswith('{"agent":"ada"')
    block = await site.store.get_block("ada", "notes")
    site.client.post(
        "/agents/ada/blocks/notes/delete", data={"csrf": site.csrf(), "version": str(block.version)}
    )
    imported = site.client.post(
        "/agents/ada/import",
        data={"csrf": site.csrf(), "on_conflict": "skip"},
        files={"file": ("ada.jsonl", exported.content, "application/x-ndjson")},
    )
    assert imported.status_code == 200
    assert (await site.store.get_block("ada", "notes")).value == "Short notes."
    junk = site.client.post(
        "/agents/ada/import",
        data={"csrf": site.csrf()},
        files={"file": ("x.jsonl", b"not json\n", "application/x-ndjson")},
    )
    assert junk.status_code == 422
    assert "cannot be imported" in junk.text


async def test_an_import_whose_last_line_is_bad_writes_none_of_the_earlier_ones(
    site: Site,
) -> None:
    exported = site.client.get("/agents/ada/export").text
    first = exported.splitlines()[0]
    block = {
        "type": "block",
        "block": {
            "id": "fresh", "agent": "ada", "label": "fresh", "value": "new text",
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        },
    }  # fmt: skip
    body = f"{first}\n{json.dumps(block)}\nnot json\n".encode()
    refused = site.client.post(
        "/agents/ada/import",
        data={"csrf": site.csrf(), "on_conflict": "skip"},
        files={"file": ("ada.jsonl", body, "application/x-ndjson")},
    )
    assert refused.status_code == 422
    assert "line 3" in refused.text
    assert "fresh" not in [b.label for b in await site.store.list_blocks("ada")]
    body = f"{first}\n{json.dumps(block)}\n".encode()
    imported = site.client.post(
        "/agents/ada/import",
        data={"csrf": site.csrf(), "on_conflict": "skip"},
        files={"file": ("ada.jsonl", body, "application/x-ndjson")},
    )
    assert imported.status_code == 200
    assert "1 records read: 1 blocks" in imported.text
    assert (await site.store.get_block("ada", "fresh")).value == "new text"


async def test_the_timeline_shows_a_days_messages(site: Site) -> None:
    page = site.client.get("/agents/ada/timeline")
    assert "Book me a ryokan in Kyoto." in page.text
    empty = site.client.get("/agents/ada/timeline?day=2001-01-01")
    assert 'id="no-messages"' in empty.text


async def test_a_stored_script_is_text_on_every_page(site: Site) -> None:
    for path in ("/agents/ada", "/agents/ada/blocks/human", "/agents/ada/search?q=tea"):
        page = site.client.get(path)
        assert "<script>window" not in page.text, path
        assert "<img src=x" not in page.text, path
    block = site.client.get("/agents/ada/blocks/human")
    assert str(escape(HOSTILE)) in block.text
    assert "script-src 'self'" in block.headers["content-security-policy"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(min_size=1, max_size=200))
async def test_any_stored_text_renders_escaped(site: Site, text: str) -> None:
    before = await site.store.get_block("ada", "persona")
    await site.store.update_block_text("ada", "persona", text, expected_version=before.version)
    page = site.client.get("/agents/ada/blocks/persona")
    assert page.status_code == 200
    shown = re.search(r'<pre class="value" id="block-value">(.*?)</pre>', page.text, re.S)
    assert shown is not None
    assert "<" not in shown.group(1)
    stored = (await site.store.get_block("ada", "persona")).value
    assert html.unescape(shown.group(1)) == stored


async def _app(tmp_path: Path, token: str | None) -> tuple[SQLiteStore, PermissionBroker]:
    db = tmp_path / "m.db"
    store = SQLiteStore(db, embedder=None)
    await seed(store)
    return store, PermissionBroker(SQLiteApprovalStore(db))


async def test_with_a_token_pages_need_a_login_and_the_cookie_is_httponly_strict(
    tmp_path: Path,
) -> None:
    store, broker = await _app(tmp_path, "s3cret")
    app = console_app(store, broker, token="s3cret")
    with TestClient(app, base_url="http://127.0.0.1", follow_redirects=False) as client:
        sent = client.get("/agents/ada")
        assert sent.status_code == 303
        assert sent.headers["location"] == "/login?next=/agents/ada"
        wrong = client.post("/login", data={"token": "guess", "next": "/agents/ada"})
        assert wrong.status_code == 401
        assert (
            "cookie" not in {k.lower() for k in wrong.headers} or "set-cookie" not in wrong.headers
        )
        right = client.post("/login", data={"token": "s3cret", "next": "/agents/ada"})
        assert right.status_code == 303
        assert right.headers["location"] == "/agents/ada"
        cookie = right.headers["set-cookie"]
        assert "HttpOnly" in cookie
        assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
        assert "s3cret" not in cookie
        assert client.get("/agents/ada").status_code == 200
        offsite = client.post("/login", data={"token": "s3cret", "next": "//evil.example/"})
        assert offsite.headers["location"] == "/"
    with TestClient(app, base_url="http://127.0.0.1") as bearer:
        assert bearer.get("/agents", headers={"authorization": "Bearer s3cret"}).status_code == 200
        assert bearer.post("/agents/ada/blocks/notes", data={"value": "x"}).status_code == 401
    assert (await store.get_block("ada", "notes")).value == "Short notes."
    await store.close()
    await broker.close()


async def test_without_a_token_only_a_loopback_host_is_served(tmp_path: Path) -> None:
    store, broker = await _app(tmp_path, None)
    app = console_app(store, broker)
    with TestClient(app, base_url="http://console.example") as client:
        page = client.get("/agents")
        assert page.status_code == 403
        assert "loopback" in page.text
    with TestClient(app, base_url="http://localhost:8765") as client:
        assert client.get("/agents").status_code == 200
    await store.close()
    await broker.close()


async def test_the_block_page_shows_its_history_and_a_diff_of_any_two_versions(
    site: Site,
) -> None:
    site.client.post(
        "/agents/ada/blocks/notes",
        data=_edit(site, "notes", value="Short notes.\nBea is Ada's sister.", char_limit="60"),
    )
    site.client.post(
        "/agents/ada/blocks/notes",
        data=_edit(site, "notes", value="Bea is Ada's sister.", char_limit="60"),
    )
    block = await site.store.get_block("ada", "notes")
    page = site.client.get("/agents/ada/blocks/notes")
    versions = re.findall(r'class="version-row" data-version="(\d+)"', page.text)
    assert [int(v) for v in versions] == list(range(block.version, 0, -1))
    diff = re.search(r'<div class="diff" id="diff">(.*?)</div>', page.text, re.S)
    assert diff is not None
    assert '<span class="del">-Short notes.</span>' in diff.group(1)
    first = site.client.get(f"/agents/ada/blocks/notes?a=1&b={block.version}")
    assert "+Bea is Ada&#39;s sister." in first.text
    assert "-# char_limit: 14" in first.text
    missing = site.client.get("/agents/ada/blocks/notes?a=999")
    assert missing.status_code == 422
    assert "not kept" in missing.text


async def test_an_agent_with_many_blocks_is_shown_a_page_at_a_time(site: Site) -> None:
    from satchel.console._blocks import ROWS_PER_PAGE

    for n in range(ROWS_PER_PAGE):
        await site.store.create_block("ada", f"fact{n:03d}", f"fact {n}")
    first = site.client.get("/agents/ada")
    second = site.client.get("/agents/ada?page=2")
    assert first.text.count('class="block-row"') == ROWS_PER_PAGE
    assert second.text.count('class="block-row"') == 3  # human, notes, persona sort last
    assert 'id="next-page"' in first.text
    assert 'id="prev-page"' in second.text
    for bad in ("3", "0", "-1", "x", "1.5", "9" * 40):
        refused = site.client.get(f"/agents/ada?page={bad}")
        assert refused.status_code == 422, bad
        assert "page must be 1 to 2" in refused.text, bad


async def test_a_write_larger_than_the_limit_or_without_a_length_is_refused_unread(
    site: Site,
) -> None:
    from satchel.console._context import MAX_FORM_BYTES

    huge = site.client.post(
        "/agents/ada/blocks/notes",
        content=b"x",
        headers={"content-length": str(MAX_FORM_BYTES + 1)},
    )
    assert huge.status_code == 413

    def chunks() -> Iterator[bytes]:
        yield b"value=x"

    unsized = site.client.post("/login", content=chunks())
    assert unsized.status_code == 411
    assert (await site.store.get_block("ada", "notes")).value == "Short notes."
