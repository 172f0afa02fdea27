"""How a chain's steps are written: :class:`Step` (made by :func:`step`) and
:class:`Fallback`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from satchel._errors import SatchelUsageError
from satchel.compose._conditions import Condition, as_condition
from satchel.tools import BaseTool

__all__ = ["Fallback", "Step", "StepTool", "step"]

StepTool = str | BaseTool | Callable[..., Any]
"""A step's tool: a registered name (``"search"``, ``"search@1"``), a tool, or a
function (made a :class:`~satchel.FunctionTool`)."""

DEFAULT_LIMIT = 8
"""How many items of a fan-out run at once, unless a step says otherwise."""

MAX_ITEMS = 100
"""The most items one fan-out takes, unless a step says otherwise: the list's
``maxItems`` in the chain's schema, and a ``retry`` naming the bound when a longer list
arrives (a model's list of 3,000 ran the tool 3,000 times)."""


@dataclass(frozen=True, slots=True)
class Fallback:
    """``on_error=Fallback("tool")``: when the step fails, run ``tool`` with the same
    arguments and use its output instead.

    Args:
        tool: The fallback tool (a registered name, a tool or a function).
    """

    tool: StepTool


@dataclass(frozen=True, kw_only=True, slots=True)
class Step:
    """One step of a :func:`~satchel.chain`; make it with :func:`step`.

    Attributes:
        tool: What runs.
        id: The step's name in mappings, conditions and errors (default: the tool's).
        map: Where a parameter comes from, when not from the field of the same name:
            ``{"text": "body"}`` (the latest earlier ``body``), ``{"text":
            "fetch.body"}`` (step ``fetch``'s), ``{"text": "input.body"}`` (the
            chain's own argument).
        when: Run only if this is true of the data so far: a JMESPath expression
            (``"label == 'urgent'"``) or a Python predicate.
        on_error: ``"stop"`` the chain (default), ``"skip"`` this step, or a
            :class:`Fallback`.
        over: A parameter to fan out over: it is given a list, and the step runs once
            per item (at most ``limit`` at a time); each output field becomes a list.
        limit: The fan-out's concurrency bound.
        max_items: The most items the fan-out takes (:data:`MAX_ITEMS` by default).
        after: Step ids this one must wait for besides those it takes data from (for
            ``concurrent`` chains).
    """

    tool: StepTool
    id: str | None = None
    map: Mapping[str, str] = field(default_factory=dict[str, str])
    when: Condition | None = None
    on_error: Literal["stop", "skip"] | Fallback = "stop"
    over: str | None = None
    limit: int = DEFAULT_LIMIT
    max_items: int = MAX_ITEMS
    after: tuple[str, ...] = ()


def step(
    tool: StepTool,
    *,
    id: str | None = None,
    map: Mapping[str, str] | None = None,
    when: str | Condition | None = None,
    on_error: Literal["stop", "skip"] | Fallback | str = "stop",
    over: str | None = None,
    limit: int = DEFAULT_LIMIT,
    max_items: int = MAX_ITEMS,
    after: Sequence[str] = (),
) -> Step:
    """A chain step (see :class:`Step` for each argument).

    Raises:
        SatchelUsageError: a condition that does not parse, an unknown ``on_error``,
            or a ``limit`` or ``max_items`` below 1.

    Example:
        >>> step("classify", map={"text": "body"})
        >>> step("escalate", when="label == 'urgent'", on_error=Fallback("notify"))
    """
    if on_error not in ("stop", "skip") and not isinstance(on_error, Fallback):
        raise SatchelUsageError(
            f"on_error must be 'stop', 'skip' or Fallback(tool), not {on_error!r}.",
            details={"on_error": repr(on_error)},
        )
    if limit < 1:
        raise SatchelUsageError(f"A fan-out limit must be at least 1, not {limit}.")
    if max_items < 1:
        raise SatchelUsageError(f"A fan-out's max_items must be at least 1, not {max_items}.")
    return Step(
        tool=tool,
        id=id,
        map=dict(map or {}),
        when=as_condition(when),
        on_error=on_error,  # pyright: ignore[reportArgumentType]
        over=over,
        limit=limit,
        max_items=max_items,
        after=tuple(after),
    )
