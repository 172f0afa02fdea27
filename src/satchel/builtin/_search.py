"""The ``search`` tool: hybrid search over the agent's archival memory and its past
conversations, returning every hit's full text."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from satchel._errors import ToolRetry
from satchel.builtin._dates import TimeParser
from satchel.builtin._views import checked
from satchel.memory import (
    Domain,
    MemoryStore,
    SearchFilters,
    SearchHit,
    TurnInProgress,
    is_relevant,
)
from satchel.memory.sources import SourceHit, SourceIndex
from satchel.tools import Tool, ToolContext

__all__ = ["SearchFiltersInput", "SearchInput", "SearchOutput", "SearchResult", "SearchTool"]

_MAX_FILTER_ITEMS = 10_000
"""The most tags, or labels, one search may filter by (every size up to it is tested)."""

RoleName = Literal["user", "assistant", "system", "tool"]


class SearchFiltersInput(BaseModel):
    """Narrow a search; every filter given must hold."""

    model_config = ConfigDict(extra="forbid")

    role: RoleName | None = Field(
        default=None, description="Only conversation messages said by this role."
    )
    start_time: str | None = Field(
        default=None,
        max_length=100,
        description="Only entries from this time on: ISO 8601 (2026-11-01, "
        "2026-11-01T14:30:00Z) or words such as 'yesterday'. A date alone means its "
        "first moment.",
    )
    end_time: str | None = Field(
        default=None,
        max_length=100,
        description="Only entries up to this time, in the same forms. A date alone means "
        "up to the end of that day.",
    )
    tags: list[str] | None = Field(
        default=None,
        max_length=_MAX_FILTER_ITEMS,
        description="Only entries carrying at least one of these tags.",
    )
    labels: list[str] | None = Field(
        default=None,
        max_length=_MAX_FILTER_ITEMS,
        description="Only archival entries with one of these labels.",
    )
    tool_traffic: bool = Field(default=False, description="Include tool calls and results.")


_FILE_KEY = "satchel.source_file"


class SearchInput(BaseModel):
    """The input of ``search``."""

    model_config = ConfigDict(extra="forbid")

    domain: Literal["archival_memory", "conversations", "all"] = Field(
        default="all",
        description="Where to look: archival_memory (stored entries), conversations (past "
        "messages) or all (the default).",
    )
    query: str = Field(
        max_length=100_000,
        description="What to look for, in plain words; meaning counts, not only exact words.",
    )
    limit: int = Field(default=10, ge=1, le=100, description="The most results to return.")
    filters: SearchFiltersInput | None = Field(
        default=None, description="Optional filters by role, time, tags or labels."
    )


class SearchResult(BaseModel):
    """One hit, with its full text."""

    domain: Literal["archival_memory", "core_memory", "conversations", "files"] = Field(
        description="archival_memory: an entry; core_memory: a line of a core or working "
        "block; conversations: a message; files: a passage of the user's files."
    )
    label: str | None = Field(
        description="The entry's label, to read or load it; for a file passage, its file "
        "and lines (open_file reads more); null for a message."
    )
    text: str = Field(description="The full text; quote from it.")
    created_at: datetime = Field(description="When it was written (UTC).")
    role: RoleName | None = Field(default=None, description="Who said a message.")
    conversation_id: str | None = Field(default=None, description="A message's conversation.")
    shared_from: str | None = Field(
        default=None, description="The agent that shared the entry with you, if any."
    )
    tags: list[str] = Field(default_factory=list[str])
    id: str = Field(description="The entry's or message's id (recall read opens an entry by it).")
    score: float = Field(description="Relevance; higher is better, within this search only.")


class SearchOutput(BaseModel):
    """The results of ``search``, best first."""

    message: str = Field(
        description="How many results, where they came from, and a warning when the search "
        "was less than usual (keyword search only: the embedding model failed)."
    )
    results: list[SearchResult] = Field(default_factory=list[SearchResult])


class SearchTool(Tool[SearchInput, SearchOutput]):
    """The ``search`` built-in tool: hybrid (BM25 and vector) search of what ``ctx.agent``
    may read in a :class:`~satchel.memory.MemoryStore`.

    Args:
        store: The memory store.
        date_languages: Languages understood in ``start_time`` and ``end_time``.
        global_agent: The person's own agent when agents are projects
            (``satchel serve --agent auto``): another agent's search also covers the
            person's memory, each such result naming it in ``shared_from``.
    """

    name = "search"
    description = (
        "Search your long-term memory (archival entries, past conversations, lines of "
        "core and working blocks) by meaning and words, best first. Each result has its "
        "full text, label and id: quote it, open it with recall, or load it with context. "
        "Skips this turn and tool traffic; says when nothing matches."
    )
    summary = "Search archival memory, past conversations and core memory lines."
    usage_rule = (
        "Search memory before saying you do not know something the user may have told you before."
    )
    category = "memory"
    actions = ("read",)
    memory_gated = True
    read_only = True
    idempotent = True

    def __init__(
        self,
        store: MemoryStore,
        *,
        date_languages: Sequence[str] = ("en",),
        global_agent: str | None = None,
    ) -> None:
        self.store = store
        self.times = TimeParser(date_languages)
        self.global_agent = global_agent

    async def execute(self, params: SearchInput, ctx: ToolContext) -> SearchOutput:
        """Search for ``ctx.agent``."""
        agent = ctx.agent
        filters = await checked(self._filters(params.filters, ctx))
        scopes = [agent]
        if self.global_agent is not None and self.global_agent != agent:
            scopes.append(self.global_agent)
        hits: dict[str, SearchHit] = {}
        warnings: list[str] = []
        for scope in scopes:  # the project's memory, then the person's
            found_here = await checked(
                self.store.search(
                    scope,
                    params.query,
                    domains=Domain(params.domain),
                    filters=filters,
                    limit=params.limit,
                )
            )
            for warning in getattr(found_here, "warnings", ()):
                if isinstance(warning, str) and warning not in warnings:
                    warnings.append(warning)
            for hit in found_here:
                hits.setdefault(hit.id, hit)  # a block shared with both: listed once
        if params.domain == "all":
            for passage in await SourceIndex(self.store, agent).search(
                params.query, limit=params.limit
            ):
                hits.setdefault(passage.id, _passage_hit(passage, agent))
        found = sorted(hits.values(), key=lambda h: -h.score)
        # Nothing relevant: say so rather than list the least unrelated entries. Else
        # relevant statements first (a question someone asked is not an answer), then
        # relevant questions, then the rest, each best first.
        relevant = {h.id for h in found if is_relevant(h)}
        ranked = sorted(found, key=lambda h: (h.id not in relevant, _is_question(h)))
        best = ranked[: params.limit] if relevant else []
        results = [_result(hit, agent) for hit in best]
        where = {"archival_memory": "archival memory", "conversations": "conversations"}.get(
            params.domain, "memory"
        )
        count = len(results)
        quoted = params.query if len(params.query) <= 80 else params.query[:77] + "..."
        if results and all(_is_question(h) for h in found if h.id in relevant):
            message = (
                f"Nothing in {where} answers {quoted!r}: only questions asked before "
                f"match ({count} result{'s' if count != 1 else ''}, best first)."
            )
        elif results:
            message = f"{count} result{'s' if count != 1 else ''} from {where}, best first."
        else:
            message = f"Nothing in {where} matches {quoted!r}"
            message += (
                f" ({len(found)} unrelated entries left out)." if found else "."
            ) + " Try other words or fewer filters, or say you do not know."
        for warning in warnings:  # e.g. keyword search only: the embedder failed
            message += f" Warning: {warning}."
        return SearchOutput(message=message, results=results)

    async def _filters(self, given: SearchFiltersInput | None, ctx: ToolContext) -> SearchFilters:
        turn = (
            TurnInProgress(conversation_id=ctx.conversation_id, started_at=ctx.turn_started_at)
            if ctx.conversation_id is not None and ctx.turn_started_at is not None
            else None
        )
        if given is None:
            return SearchFilters(exclude_turn=turn)
        start = (
            await self.times.parse(given.start_time, end=False, field="start_time")
            if given.start_time is not None
            else None
        )
        end = (
            await self.times.parse(given.end_time, end=True, field="end_time")
            if given.end_time is not None
            else None
        )
        if start is not None and end is not None and start > end:
            raise ToolRetry(
                f"start_time ({start.isoformat()}) is after end_time ({end.isoformat()}); "
                "swap them or widen the range.",
                details={"start_time": start.isoformat(), "end_time": end.isoformat()},
            )
        return SearchFilters(
            role=given.role,
            start_time=start,
            end_time=end,
            tags=tuple(given.tags) if given.tags else None,
            labels=tuple(given.labels) if given.labels else None,
            tool_traffic=given.tool_traffic,
            exclude_turn=turn,
        )


def _is_question(hit: SearchHit) -> bool:
    return hit.role == "user" and hit.text.rstrip().endswith("?")


def _passage_hit(passage: SourceHit, agent: str) -> SearchHit:
    """A passage of the agent's files as a search hit, its label naming file and lines."""
    return passage.hit.model_copy(
        update={
            "label": f"{passage.file}:{passage.start}-{passage.end}",
            "owner": agent,
            "metadata": {_FILE_KEY: passage.file},
        }
    )


def _result(hit: SearchHit, agent: str) -> SearchResult:
    if _FILE_KEY in hit.metadata:
        return SearchResult(
            domain="files",
            label=hit.label,
            text=hit.text,
            created_at=hit.created_at,
            id=hit.id,
            score=hit.score,
        )
    label = hit.label
    if label is not None and hit.owner != agent and "/" not in label:
        label = f"{hit.owner}/{label}"  # found in the person's memory: how ``agent`` names it
    return SearchResult(
        domain=hit.domain,
        label=label,
        text=hit.text,
        created_at=hit.created_at,
        role=hit.role,
        conversation_id=hit.conversation_id,
        shared_from=hit.owner if hit.owner != agent else None,
        tags=list(hit.tags),
        id=hit.id,
        score=hit.score,
    )
