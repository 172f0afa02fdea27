"""The MCP client behind one request: what it is, what it supports, and how to ask its
human something (elicitation).

A tool served over MCP finds its :class:`ClientChannel` with :func:`client_channel`::

    channel = client_channel(ctx)
    if channel is not None and channel.can_elicit:
        approved = await channel.confirm("Delete the note 'groceries'?", key=approval_id)

MCP has two protocol eras, and the channel hides the difference:

* a handshake-era connection (``initialize``, up to 2025-11-25) can send the client an
  ``elicitation/create`` request in the middle of a tool call and wait for the answer;
* a 2026-07-28 connection forbids server-initiated requests. The tool call instead ends
  with an ``InputRequiredResult`` carrying the question; the client asks its human and
  calls the tool again with the answer, and the tool runs again from the start. On that
  second run :meth:`ClientChannel.elicit` finds the answer under the same ``key`` and
  returns it at once. So a tool that elicits must reach the same ``elicit`` calls, with
  the same keys, when it runs again with the same arguments.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from satchel._errors import ApprovalRequired
from satchel.tools import ProgressReporter, ToolContext

__all__ = [
    "CLIENT_CHANNEL_KEY",
    "ORIGIN_META_KEY",
    "ClientChannel",
    "ElicitationAnswer",
    "ElicitationPending",
    "client_channel",
]

logger = logging.getLogger("satchel.mcp")

CLIENT_CHANNEL_KEY = "satchel.mcp.client"
"""The key of the :class:`ClientChannel` in :attr:`ToolContext.extras
<satchel.ToolContext.extras>` for a call that came over MCP."""

ORIGIN_META_KEY = "satchel/origin"
"""The ``_meta`` key of a ``tools/call`` naming the channel the request came from
(``"discord:1234567890"``): a bridge that relays a Discord message to an MCP client sets
it, so a consent request can be announced where the human is."""

_ORIGIN = re.compile(r"^[a-z][a-z0-9_-]{0,31}:[\x21-\x7e]{1,2000}$")

ElicitAction = Literal["accept", "decline", "cancel"]

_CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Approve",
            "description": "Leave ticked to let this action run.",
            "default": True,
        }
    },
    "required": ["approve"],
}


@dataclass(frozen=True, slots=True)
class ElicitationAnswer:
    """What the client's human answered.

    Attributes:
        action: ``"accept"`` (the form was submitted), ``"decline"`` (explicitly
            refused) or ``"cancel"`` (dismissed without a choice, or timed out).
        content: The submitted form's values when ``action`` is ``"accept"``.
    """

    action: ElicitAction
    content: Mapping[str, Any] = field(default_factory=dict[str, Any])

    @property
    def accepted(self) -> bool:
        """True when the human submitted the form."""
        return self.action == "accept"


class ElicitationPending(ApprovalRequired):
    """Raised by :meth:`ClientChannel.elicit` on a 2026-07-28 connection to stop the
    tool while the client asks its human. The server turns the call into an
    ``InputRequiredResult``; the client calls again with the answer.

    A tool should let it propagate. If it escapes to a caller that is not the MCP
    server, it reads as ``needs_approval``.
    """


def _default_key(message: str, schema: Mapping[str, Any]) -> str:
    text = json.dumps([message, schema], sort_keys=True, ensure_ascii=False, default=str)
    return "satchel-" + hashlib.sha256(text.encode()).hexdigest()[:24]


class ClientChannel:
    """The MCP client behind one request, as seen by the tool that serves it.

    Built by the server for every request; tools reach it through
    :func:`client_channel`. Read-only apart from :meth:`elicit` and :meth:`confirm`.

    Args:
        request: The SDK's context of the request being served.
        input_responses: The answers a 2026-07-28 client sent with this call, by key.
    """

    __slots__ = ("_input_responses", "_pending", "_request")

    def __init__(
        self,
        request: ServerRequestContext[Any, Any],
        *,
        input_responses: Mapping[str, Any] | None = None,
    ) -> None:
        self._request = request
        self._input_responses: Mapping[str, Any] = input_responses or {}
        self._pending: dict[str, types.ElicitRequest] = {}

    # -- facts -----------------------------------------------------------------

    @property
    def protocol_version(self) -> str:
        """The MCP protocol version of this connection (for example ``"2025-11-25"``)."""
        return self._request.protocol_version

    @property
    def is_modern(self) -> bool:
        """True on a 2026-07-28 (per-request envelope) connection."""
        return self._request.protocol_version in MODERN_PROTOCOL_VERSIONS

    @property
    def request_id(self) -> str | int | None:
        """The JSON-RPC id of the request being served."""
        return self._request.request_id

    @property
    def client_name(self) -> str | None:
        """The name the client gave for itself, when it gave one."""
        params = self._request.session.client_params
        return params.client_info.name if params is not None else None

    @property
    def headers(self) -> Mapping[str, str] | None:
        """The HTTP request's headers over streamable HTTP; ``None`` over stdio."""
        headers: Any = getattr(self._request.request, "headers", None)
        return cast("Mapping[str, str]", headers) if isinstance(headers, Mapping) else None

    @property
    def connection(self) -> object:
        """What identifies this request's connection: the same object for every request
        of one session (a key for per-connection state, such as its project)."""
        return self._request.session

    @property
    def can_list_roots(self) -> bool:
        """Whether the client declared the roots capability and this connection can
        carry a ``roots/list`` request (a handshake-era session with a back channel)."""
        caps = self._request.session.client_capabilities
        return (
            caps is not None
            and caps.roots is not None
            and not self.is_modern
            and self._request.session.can_send_request
        )

    async def list_roots(self) -> list[str] | None:
        """The client's workspace roots (``file://`` URIs), in its order; ``None`` when
        the client cannot be asked (see :attr:`can_list_roots`) or failed the request.

        Roots are deprecated by the 2026-07-28 protocol (SEP-2577) but still what
        Cursor, Claude Code and VS Code use to say which project is open.
        """
        if not self.can_list_roots:
            return None
        try:
            result = await self._request.session.send_request(
                types.ListRootsRequest(),
                types.ListRootsResult,
                metadata=ServerMessageMetadata(related_request_id=self._request.request_id),
            )
        except MCPError as exc:  # NoBackChannelError among them
            logger.warning("the MCP client failed roots/list: %s", exc)
            return None
        return [str(root.uri) for root in result.roots]

    @property
    def origin(self) -> str | None:
        """The channel the request says it came from (``_meta`` key
        :data:`ORIGIN_META_KEY`, such as ``"discord:1234567890"``); ``None`` when it
        says nothing usable (a ``kind:address`` string of printable ASCII)."""
        params = self._request.params
        meta: Any = params.get("_meta") if params is not None else None
        if not isinstance(meta, Mapping):
            return None
        value: Any = cast("Mapping[str, Any]", meta).get(ORIGIN_META_KEY)
        return value if isinstance(value, str) and _ORIGIN.match(value) else None

    @property
    def wants_progress(self) -> bool:
        """Whether the request carried a ``progressToken`` (in ``_meta``), asking for
        ``notifications/progress``."""
        params = self._request.params
        meta: Any = params.get("_meta") if params is not None else None
        if not isinstance(meta, Mapping):
            return False
        token: Any = cast("Mapping[str, Any]", meta).get("progressToken")
        return isinstance(token, str | int) and not isinstance(token, bool)

    def progress_reporter(self) -> ProgressReporter | None:
        """Sends this request's ``notifications/progress``; ``None`` when the client did
        not ask for progress. Reports that would not increase the progress are dropped
        (the spec requires it to grow)."""
        if not self.wants_progress:
            return None
        return _Progress(self._request)

    @property
    def can_elicit(self) -> bool:
        """Whether the client declared form elicitation and this connection can carry
        it (a stateless HTTP request on the handshake era cannot)."""
        caps = self._request.session.client_capabilities
        if caps is None or caps.elicitation is None:
            return False
        if caps.elicitation.form is None and caps.elicitation.url is not None:
            return False  # URL mode only
        return self.is_modern or self._request.session.can_send_request

    # -- asking ----------------------------------------------------------------

    async def elicit(
        self,
        message: str,
        requested_schema: Mapping[str, Any] | None = None,
        *,
        key: str | None = None,
    ) -> ElicitationAnswer | None:
        """Ask the client's human to fill in a form (MCP form elicitation).

        Args:
            message: What to ask, shown to the human.
            requested_schema: A flat JSON object schema of primitive fields; an empty
                form (a plain yes/no question) when ``None``.
            key: A stable id for this question, the same whenever the tool runs again
                with the same arguments (an approval id is ideal). Derived from
                ``message`` and the schema when ``None``.

        Returns:
            The answer, or ``None`` when the client cannot be asked (it did not declare
            elicitation, or it failed the request); fall back to another channel then.
            There is no time limit: wrap the call in ``anyio.move_on_after`` for one.

        Raises:
            ElicitationPending: on a 2026-07-28 connection, when the answer is not here
                yet. Let it propagate: the client asks and calls the tool again.
        """
        schema: dict[str, Any] = dict(
            requested_schema or {"type": "object", "properties": {}, "required": []}
        )
        key = key or _default_key(message, schema)
        if key in self._input_responses:
            return _answer(self._input_responses[key])
        if not self.can_elicit:
            return None
        if self.is_modern:
            self._pending[key] = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
            )
            raise ElicitationPending(
                "Waiting for the user to answer in the MCP client: " + message,
                details={"elicitation_key": key},
            )
        session = self._request.session
        try:
            result = await session.elicit_form(
                message, schema, related_request_id=self._request.request_id
            )
        except MCPError as exc:  # the client refused or failed the request
            logger.warning("the MCP client failed an elicitation: %s", exc.message)
            return None
        return _answer(result)

    async def confirm(self, message: str, *, key: str | None = None) -> bool | None:
        """Ask the client's human a yes/no question, such as approving a destructive
        call.

        Returns:
            True when approved; False when declined, dismissed or unticked; ``None``
            when the client cannot be asked.

        Raises:
            ElicitationPending: as for :meth:`elicit`.
        """
        answer = await self.elicit(message, _CONFIRM_SCHEMA, key=key)
        if answer is None:
            return None
        return answer.accepted and answer.content.get("approve", True) is not False

    # -- for the server --------------------------------------------------------

    def pending_input(self) -> dict[str, types.ElicitRequest]:
        """The questions raised by :class:`ElicitationPending` during this call, by key
        (for the server to send as an ``InputRequiredResult``)."""
        return dict(self._pending)


class _Progress:
    """One request's progress notifications, each one further than the last."""

    __slots__ = ("_last", "_request")

    def __init__(self, request: ServerRequestContext[Any, Any]) -> None:
        self._request = request
        self._last: float | None = None

    async def __call__(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        if self._last is not None and progress <= self._last:
            return
        self._last = progress
        await self._request.session.report_progress(progress, total, message)


def _answer(raw: Any) -> ElicitationAnswer:
    if not isinstance(raw, types.ElicitResult):
        try:
            raw = types.ElicitResult.model_validate(raw)
        except ValidationError:
            logger.warning("the MCP client answered an elicitation with something else")
            return ElicitationAnswer("cancel")
    return ElicitationAnswer(raw.action, dict(raw.content or {}))


def client_channel(ctx: ToolContext) -> ClientChannel | None:
    """The :class:`ClientChannel` of a call that came over MCP, else ``None``.

    Example:
        >>> channel = client_channel(ctx)
        >>> if channel is not None and channel.can_elicit:
        ...     ok = await channel.confirm("Really delete it?", key=approval_id)
    """
    channel = ctx.extras.get(CLIENT_CHANNEL_KEY)
    return channel if isinstance(channel, ClientChannel) else None
