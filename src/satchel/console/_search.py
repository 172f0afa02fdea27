"""The search page: the store's hybrid search over archival memory and conversations,
with its filters (role, time range, tags, labels), paged, each hit's full text one click
away; and the conversation timeline of an agent, by day."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from satchel._errors import InvalidInputError
from satchel.console._context import Console
from satchel.memory import Domain, SearchFilters

__all__ = ["PAGE_SIZE", "SearchPages"]

PAGE_SIZE = 20
"""Hits per page."""
_MAX_HITS = 1000  # the store's own limit
_ROLES = ("user", "assistant", "system", "tool")
_EXCERPT = 240


def _day(raw: str, name: str) -> date | None:
    text = raw.strip()
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InvalidInputError(
            f"{name} must be a date like 2026-11-25, not {text[:40]!r}"
        ) from None


def _words(raw: str) -> tuple[str, ...] | None:
    items = tuple(w for w in (p.strip() for p in raw.replace(",", " ").split()) if w)
    return items or None


def filters_of(params: dict[str, str]) -> SearchFilters:
    """The search filters a query string asks for.

    Raises:
        InvalidInputError: A bad role or date, or a range that ends before it starts.
    """
    role = params.get("role", "").strip() or None
    if role is not None and role not in _ROLES:
        raise InvalidInputError(f"{role[:40]!r} is not a role; choose {', '.join(_ROLES)}")
    since, until = _day(params.get("since", ""), "since"), _day(params.get("until", ""), "until")
    if since is not None and until is not None and since > until:
        raise InvalidInputError("the range ends before it starts: 'since' is after 'until'")
    return SearchFilters(
        role=role,  # pyright: ignore[reportArgumentType]  (checked against _ROLES)
        start_time=None if since is None else datetime.combine(since, time.min, UTC),
        end_time=None
        if until is None
        else datetime.combine(until, time.min, UTC) + timedelta(days=1, microseconds=-1),
        tags=_words(params.get("tags", "")),
        labels=_words(params.get("labels", "")),
    )


def _page(raw: str) -> int:
    text = raw.strip() or "1"
    if not text.isdigit() or not 1 <= int(text) <= _MAX_HITS // PAGE_SIZE:
        raise InvalidInputError(f"page must be 1 to {_MAX_HITS // PAGE_SIZE}, not {text[:20]!r}")
    return int(text)


class SearchPages:
    """The handlers of the search and timeline pages."""

    def __init__(self, console: Console) -> None:
        self.console = console

    async def search(self, request: Request) -> Response:
        """Search an agent's memory; the form is the query string, so a search is a link."""
        agent = str(request.path_params["agent"])
        await self.console.known_agent(agent)
        params = dict(request.query_params)
        query = params.get("q", "")
        domain_name = params.get("domain", "all") or "all"
        try:
            domain = {
                "all": Domain.ALL,
                "archival": Domain.ARCHIVAL_MEMORY,
                "conversations": Domain.CONVERSATIONS,
            }[domain_name]
        except KeyError:
            raise InvalidInputError(
                f"{domain_name[:40]!r} is not a domain; choose all, archival or conversations"
            ) from None
        filters = filters_of(params)
        page = _page(params.get("page", ""))
        hits: list[Any] = []
        warnings: tuple[str, ...] = ()
        more = False
        if query.strip():
            found = await self.console.store.search(
                agent,
                query,
                domains=domain,
                filters=filters,
                limit=min(page * PAGE_SIZE + 1, _MAX_HITS),
            )
            hits = found[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
            more = len(found) > page * PAGE_SIZE
            warnings = tuple(str(w) for w in getattr(found, "warnings", ()))
        shown = [
            {"hit": h, "excerpt": h.text[:_EXCERPT], "cut": len(h.text) > _EXCERPT} for h in hits
        ]
        context = {
            "agent": agent,
            "params": params,
            "query": query,
            "domain": domain_name,
            "roles": _ROLES,
            "hits": shown,
            "page": page,
            "first": (page - 1) * PAGE_SIZE + 1,
            "more": more,
            "searched": bool(query.strip()),
            "warnings": warnings,
            "pager": urlencode(sorted((k, v) for k, v in params.items() if k != "page")),
        }
        return self.console.renderer.render(request, "search.html", context)

    async def timeline(self, request: Request) -> Response:
        """An agent's conversation messages, one day at a time (the latest day by
        default)."""
        agent = str(request.path_params["agent"])
        await self.console.known_agent(agent)
        day = _day(request.query_params.get("day", ""), "day")
        if day is None:
            latest = await self.console.store.list_messages(agent, limit=1)
            day = (
                latest[-1].created_at.astimezone(UTC).date() if latest else datetime.now(UTC).date()
            )
        start = datetime.combine(day, time.min, UTC)
        end = start + timedelta(days=1)
        messages = await self.console.store.list_messages(agent, limit=_MAX_HITS, before=end)
        shown = [m for m in messages if m.created_at >= start]
        earlier = await self.console.store.list_messages(agent, limit=1, before=start)
        context = {
            "agent": agent,
            "day": day.isoformat(),
            "messages": shown,
            "previous": (day - timedelta(days=1)).isoformat(),
            "next": (day + timedelta(days=1)).isoformat(),
            "earlier": earlier[-1].created_at.astimezone(UTC).date().isoformat()
            if earlier
            else None,
            "full": len(messages) == _MAX_HITS and len(shown) == len(messages),
        }
        return self.console.renderer.render(request, "timeline.html", context)
