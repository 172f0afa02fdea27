"""What every page of the console works with, and the helpers its handlers share."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as field_

from starlette.datastructures import FormData
from starlette.requests import Request

from satchel._errors import InvalidInputError, NotFoundError
from satchel._throttle import LoginThrottle
from satchel.consent import PermissionBroker
from satchel.console._guard import Guard
from satchel.console._operator import Operator
from satchel.console._render import Renderer
from satchel.memory import AgentSummary, GatedStore

__all__ = ["MAX_FORM_BYTES", "Console", "field"]

MAX_FORM_BYTES = 4 * 1024 * 1024
"""The largest write the console reads (a bigger body gets HTTP 413)."""


def field(form: FormData, name: str, default: str = "") -> str:
    """A text field of ``form`` (``default`` when absent).

    Raises:
        InvalidInputError: The field is a file, not text.
    """
    value = form.get(name, default)
    if not isinstance(value, str):
        raise InvalidInputError(f"the field {name!r} must be text, not a file")
    return value


@dataclass(kw_only=True)
class Console:
    """The console's state: the stores it shows and writes, and how it renders.

    Attributes:
        store: The memory store, which the console writes to as the operator.
        broker: The approval broker on the same database.
        guard: Authentication and CSRF.
        renderer: The templates.
        agent: The agent ``/`` opens, if one was named.
        throttle: Wrong tokens per client, to slow down guessing.
    """

    store: GatedStore
    broker: PermissionBroker
    guard: Guard
    renderer: Renderer
    agent: str | None = None
    throttle: LoginThrottle = field_(default_factory=LoginThrottle)

    @property
    def operator(self) -> Operator:
        """The operator's writes on :attr:`store`."""
        return Operator(self.store)

    async def form(self, request: Request) -> FormData:
        """The body of a write, after its CSRF check.

        Raises:
            HTTPException: 403 without a valid CSRF token, 413 when too large, 400 when
                the body is not a form.
        """
        from starlette.exceptions import HTTPException

        size = request.headers.get("content-length")
        if size is not None and size.isdigit() and int(size) > MAX_FORM_BYTES:
            raise HTTPException(413, f"The form is larger than {MAX_FORM_BYTES} bytes.")
        form = await request.form(max_files=1, max_fields=64, max_part_size=MAX_FORM_BYTES)
        self.guard.check_write(request, form)
        return form

    async def known_agent(self, agent: str) -> AgentSummary:
        """The summary of ``agent``, which the store must know.

        Raises:
            NotFoundError: No such agent.
        """
        found = await self.store.describe_agents(agent)
        if not found:
            raise NotFoundError(
                f"there is no agent {agent!r} in this memory database",
                details={"agent": agent},
            )
        return found[0]
