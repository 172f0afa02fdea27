"""The catalog's filters answer to AgenticPal's category and action names (issue 32),
while each tool's row and the overview's counts stay satchel's own."""

from __future__ import annotations

import pytest

from satchel.meta import MetaTools
from satchel.registry import ToolRegistry
from satchel.tools import tool

pytestmark = pytest.mark.anyio


@tool(category="email", actions=["send", "write"], destructive=True)
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email."""
    return "sent"


@tool(category="calendar", actions=["read"], read_only=True)
def list_calendar_events(time_min: str) -> str:
    """List the calendar's events."""
    return "events"


@tool(category="calendar", actions=["read", "search"], read_only=True)
def search_calendar_events(query: str) -> str:
    """Search the calendar's events."""
    return "events"


@tool(category="calendar", actions=["update"])
def update_calendar_event(event_id: str, title: str) -> str:
    """Edit a calendar event."""
    return "updated"


@pytest.fixture
def meta() -> MetaTools:
    catalog = ToolRegistry(
        [send_email, list_calendar_events, search_calendar_events, update_calendar_event]
    )
    return MetaTools(catalog, embedder=None, learn=False)


async def test_gmail_list_write_and_create_find_what_they_found_in_agenticpal(
    meta: MetaTools,
) -> None:
    async def names(categories: list[str], actions: list[str]) -> list[str]:
        found = await meta.discover(categories=categories, actions=actions, limit=10)
        return [entry.name for entry in found.tools]

    assert await names(["gmail"], ["create"]) == ["send_email"]
    assert await names(["Calendar"], ["list", "search"]) == [
        "list_calendar_events",
        "search_calendar_events",
    ]
    assert await names(["calendar"], ["write"]) == ["update_calendar_event"]
    assert meta.index.unknown_filters(["gmail", "telegram"], ["list", "fly"]) == (
        ["telegram"],
        ["fly"],
    )


async def test_the_rows_and_the_overview_keep_satchels_own_names(meta: MetaTools) -> None:
    found = await meta.discover(categories=["gmail"])
    assert found.for_model()["tools"] == [
        ["send_email", found.tools[0].summary, "email", "send,write", True]
    ]
    overview = (await meta.discover()).for_model()
    assert overview["categories"] == {"calendar": 3, "email": 1}
    assert set(overview["actions"]) == {"read", "search", "send", "update", "write"}
