"""Letta's tool rules as :mod:`satchel.rules`, and back.

=========================  ==========================================
Letta ``type``             satchel rule
=========================  ==========================================
``exit_loop``              :class:`~satchel.rules.Terminal`
``continue_loop``          :class:`~satchel.rules.Continue`
``run_first``              :class:`~satchel.rules.Init` (``args`` as its arguments)
``constrain_child_tools``  :class:`~satchel.rules.AllowedChildren`
``max_count_per_step``     :class:`~satchel.rules.MaxCalls` (for that tool)
``required_before_exit``   :class:`~satchel.rules.RequiredBeforeExit`
``conditional``            :class:`~satchel.rules.Conditional`
``parent_last_tool``,      none: kept in the profile, given back on export, and
``requires_approval``      reported (satchel's approval gate covers the second)
=========================  ==========================================

Any other type is refused: satchel cannot tell what an unknown rule would constrain.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from satchel._errors import InvalidInputError
from satchel.agentfile._schema import LettaToolRule
from satchel.rules import (
    AllowedChildren,
    Conditional,
    Continue,
    Init,
    MaxCalls,
    RequiredBeforeExit,
    Terminal,
    ToolRule,
)

__all__ = ["KEPT_RULE_TYPES", "RULE_TYPES", "letta_rule", "satchel_rule", "satchel_rules"]

RULE_TYPES: Final = (
    "exit_loop",
    "continue_loop",
    "run_first",
    "constrain_child_tools",
    "max_count_per_step",
    "required_before_exit",
    "conditional",
)
"""The Letta rule types satchel runs as its own rules."""

KEPT_RULE_TYPES: Final = ("parent_last_tool", "requires_approval")
"""Letta rule types satchel has no rule for: kept and given back on export."""


def satchel_rule(rule: LettaToolRule, where: str = "a tool rule") -> ToolRule | None:
    """The satchel rule of one Letta rule; ``None`` for a type in
    :data:`KEPT_RULE_TYPES`.

    Raises:
        InvalidInputError: An unknown type, or a field the type needs is missing or
            invalid (the message names ``where``).
    """
    tool = rule.tool_name
    match rule.type:
        case "exit_loop":
            return Terminal(tool)
        case "continue_loop":
            return Continue(tool)
        case "run_first":
            return Init(tool, dict(rule.args) if rule.args is not None else None)
        case "required_before_exit":
            return RequiredBeforeExit(tool)
        case "constrain_child_tools":
            if not rule.children:
                raise InvalidInputError(f"{where} (constrain_child_tools) has no children")
            return AllowedChildren(tool, rule.children)
        case "max_count_per_step":
            limit = rule.max_count_limit
            if limit is None or limit < 1:
                raise InvalidInputError(
                    f"{where} (max_count_per_step) needs a max_count_limit of at least 1"
                )
            return MaxCalls(limit, tool)
        case "conditional":
            if rule.child_output_mapping is None:
                raise InvalidInputError(f"{where} (conditional) has no child_output_mapping")
            return Conditional(tool, dict(rule.child_output_mapping), default=rule.default_child)
        case kind if kind in KEPT_RULE_TYPES:
            return None
        case kind:
            known = ", ".join((*RULE_TYPES, *KEPT_RULE_TYPES))
            raise InvalidInputError(f"{where} has an unknown type {kind[:60]!r} (known: {known})")


def satchel_rules(rules: Sequence[LettaToolRule], where: str) -> list[ToolRule]:
    """Every rule of ``rules`` satchel runs, in order (see :func:`satchel_rule`)."""
    out: list[ToolRule] = []
    for i, rule in enumerate(rules):
        made = satchel_rule(rule, f"{where} tool rule {i}")
        if made is not None:
            out.append(made)
    return out


def letta_rule(rule: ToolRule) -> dict[str, Any]:
    """A satchel rule in Letta's form, for exporting an agent whose rules satchel was
    given in Python.

    Raises:
        InvalidInputError: A rule Letta has no type for (:class:`MaxCalls` over all
            tools, or a rule class of one's own).
    """
    match rule:
        case Terminal():
            return {"tool_name": rule.tool, "type": "exit_loop"}
        case Continue():
            return {"tool_name": rule.tool, "type": "continue_loop"}
        case Init():
            args = dict(rule.arguments) if rule.arguments is not None else None
            return {"tool_name": rule.tool, "type": "run_first", "args": args}
        case RequiredBeforeExit():
            return {"tool_name": rule.tool, "type": "required_before_exit"}
        case AllowedChildren():
            return {
                "tool_name": rule.tool,
                "type": "constrain_child_tools",
                "children": list(rule.children),
            }
        case MaxCalls(tool=str() as tool):
            return {"tool_name": tool, "type": "max_count_per_step", "max_count_limit": rule.limit}
        case Conditional():
            return {
                "tool_name": rule.tool,
                "type": "conditional",
                "child_output_mapping": dict(rule.choices),
                "default_child": rule.default,
            }
        case MaxCalls():
            raise InvalidInputError("Letta has no rule for a limit on all tools together")
        case _:
            raise InvalidInputError(f"Letta has no rule like {type(rule).__name__}")
