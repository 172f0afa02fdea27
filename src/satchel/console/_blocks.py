"""The pages of agents and their blocks: list, read, edit, create, archive, load and
delete (with a confirmation)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from satchel._errors import InvalidInputError, SatchelError
from satchel.console._context import Console, field
from satchel.console._errors import status_of
from satchel.console._history import history_view
from satchel.console._operator import BlockEdit, parse_limit, parse_permission
from satchel.memory import Block, BlockKind, Permission

__all__ = ["NEAR_LIMIT", "ROWS_PER_PAGE", "BlockPages"]

NEAR_LIMIT = 0.8
"""The share of its limit at which a block's size bar turns amber."""

ROWS_PER_PAGE = 100
"""Blocks per page of an agent's block table."""

_IN_CONTEXT = (BlockKind.CORE, BlockKind.WORKING)
_PAGE_DIGITS = 9  # a page number longer than this is past any listing


def _param(request: Request, name: str) -> str:
    return str(request.path_params[name])


def _usage(block: Block) -> dict[str, Any]:
    limit = block.char_limit
    share = None if not limit else block.chars / limit
    return {
        "chars": block.chars,
        "limit": limit,
        "high": None if limit is None else int(limit * NEAR_LIMIT),
        "near": share is not None and share >= NEAR_LIMIT,
        "over": limit is not None and block.chars > limit,
    }


class BlockPages:
    """The handlers of the agent and block pages."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def _url(self, request: Request, agent: str, label: str | None = None) -> str:
        base = self.console.renderer.base(request)
        url = f"{base}/agents/{quote(agent, safe='')}"
        return url if label is None else f"{url}/blocks/{quote(label, safe='')}"

    async def home(self, request: Request) -> Response:
        """``/``: the named agent's page, else the list of agents."""
        base = self.console.renderer.base(request)
        if self.console.agent is not None:
            return RedirectResponse(self._url(request, self.console.agent), status_code=303)
        return RedirectResponse(f"{base}/agents", status_code=303)

    async def agents(self, request: Request) -> Response:
        """Every agent with its counts."""
        summaries = await self.console.store.describe_agents()
        return self.console.renderer.render(request, "agents.html", {"agents": summaries})

    async def agent(self, request: Request) -> Response:
        """An agent's core and working blocks, and a form for a new block."""
        return await self._agent_page(request, _param(request, "agent"))

    async def _agent_page(
        self,
        request: Request,
        agent: str,
        *,
        error: SatchelError | None = None,
        draft: dict[str, str] | None = None,
    ) -> Response:
        summary = await self.console.known_agent(agent)
        raw = request.query_params.get("page", "1").strip()
        page = int(raw) if raw.isdigit() and len(raw) <= _PAGE_DIGITS else 0
        listing = await self.console.store.list_blocks_page(
            agent, kinds=_IN_CONTEXT, offset=max(0, page - 1) * ROWS_PER_PAGE, limit=ROWS_PER_PAGE
        )
        pages = max(1, -(-listing.total // ROWS_PER_PAGE))
        if not 1 <= page <= pages:
            raise InvalidInputError(f"page must be 1 to {pages}, not {raw[:20]!r}")
        rows = [{"block": b, "usage": _usage(b), "own": b.agent == agent} for b in listing.blocks]
        context = {
            "agent": agent,
            "summary": summary,
            "rows": rows,
            "count": listing.total,
            "page": page,
            "pages": pages,
            "permissions": [p.value for p in Permission],
            "kinds": [k.value for k in BlockKind],
            "error": error,
            "draft": draft or {},
            "saved": request.query_params.get("saved", ""),
        }
        status = 200 if error is None else status_of(error)
        return self.console.renderer.render(request, "agent.html", context, status=status)

    async def block(self, request: Request) -> Response:
        """One block: its settings, its text, the edit form and its history."""
        agent, label = _param(request, "agent"), _param(request, "label")
        return await self._block_page(request, agent, label)

    async def _block_page(
        self,
        request: Request,
        agent: str,
        label: str,
        *,
        error: SatchelError | None = None,
        draft: dict[str, str] | None = None,
    ) -> Response:
        await self.console.known_agent(agent)
        block = await self.console.store.get_block(agent, label)
        history = await history_view(self.console.store, block, request.query_params)
        context = {
            "agent": agent,
            "block": block,
            "usage": _usage(block),
            "permissions": [p.value for p in Permission],
            "error": error,
            "draft": draft,
            "saved": request.query_params.get("saved", ""),
            "history": history,
        }
        status = 200 if error is None else status_of(error)
        return self.console.renderer.render(request, "block.html", context, status=status)

    async def edit(self, request: Request) -> Response:
        """Save the block form; on a refusal the page comes back with the text typed."""
        agent, label = _param(request, "agent"), _param(request, "label")
        form = await self.console.form(request)
        draft = {
            name: field(form, name)
            for name in ("value", "description", "permission", "char_limit", "version")
        }
        try:
            version = draft["version"].strip()
            if not version.isdigit():
                raise InvalidInputError("the form lost the block's version; reload the page")
            edit = BlockEdit(
                value=draft["value"].replace("\r\n", "\n"),
                description=draft["description"].replace("\r\n", "\n"),
                permission=parse_permission(draft["permission"]),
                char_limit=parse_limit(draft["char_limit"]),
                expected_version=int(version),
            )
            await self.console.operator.edit(agent, label, edit)
        except SatchelError as exc:
            return await self._block_page(request, agent, label, error=exc, draft=draft)
        return RedirectResponse(self._url(request, agent, label) + "?saved=1", status_code=303)

    async def create(self, request: Request) -> Response:
        """Create a block from the agent page's form."""
        agent = _param(request, "agent")
        form = await self.console.form(request)
        draft = {
            name: field(form, name)
            for name in ("label", "value", "description", "kind", "permission", "char_limit")
        }
        try:
            await self.console.known_agent(agent)
            try:
                kind = BlockKind(draft["kind"] or "core")
            except ValueError:
                raise InvalidInputError(f"{draft['kind'][:40]!r} is not a kind of block") from None
            await self.console.operator.create(
                agent,
                draft["label"].strip(),
                draft["value"].replace("\r\n", "\n"),
                description=draft["description"],
                kind=kind,
                permission=parse_permission(draft["permission"] or "read_write"),
                char_limit=parse_limit(draft["char_limit"]),
            )
        except SatchelError as exc:
            return await self._agent_page(request, agent, error=exc, draft=draft)
        return RedirectResponse(
            self._url(request, agent, draft["label"].strip()) + "?saved=1", status_code=303
        )

    async def move(self, request: Request) -> Response:
        """Archive a block or load it into working memory (``action`` in the form)."""
        agent, label = _param(request, "agent"), _param(request, "label")
        form = await self.console.form(request)
        action = field(form, "action")
        kinds = {"archive": BlockKind.ARCHIVAL, "load": BlockKind.WORKING}
        if action not in kinds:
            raise InvalidInputError(f"{action[:40]!r} is not archive or load")
        await self.console.operator.move(agent, label, kinds[action])
        return RedirectResponse(self._url(request, agent, label) + "?saved=1", status_code=303)

    async def confirm_delete(self, request: Request) -> Response:
        """Ask before deleting a block."""
        agent, label = _param(request, "agent"), _param(request, "label")
        block = await self.console.store.get_block(agent, label)
        context = {"agent": agent, "block": block}
        return self.console.renderer.render(request, "confirm_delete.html", context)

    async def delete(self, request: Request) -> Response:
        """Delete a block the operator confirmed."""
        agent, label = _param(request, "agent"), _param(request, "label")
        form = await self.console.form(request)
        version = field(form, "version").strip()
        if not version.isdigit():
            raise InvalidInputError("the confirmation lost the block's version; ask again")
        await self.console.operator.delete(agent, label, expected_version=int(version))
        return RedirectResponse(self._url(request, agent) + "?saved=deleted", status_code=303)
