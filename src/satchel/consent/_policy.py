"""Which tool calls satchel's own approval gate holds for a human: :class:`ApprovalPolicy`.

Memory is not this gate's business. A tool marked
:attr:`~satchel.tools.ToolSpec.memory_gated` (the built-in ``context``, ``recall`` and
``search``) writes through the memory store's permission gate, where the block's
permission alone decides what runs at once, what asks a human and what is denied
(DESIGN §4). Every other tool (a user's, a mounted server's) is held according to the
policy.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from satchel.tools import ToolSpec

__all__ = ["ApprovalPolicy", "needs_approval"]


class ApprovalPolicy(StrEnum):
    """Which calls of tools outside memory wait for a human's approval.

    * ``destructive`` (the default): calls the tool's annotations mark destructive
      (per operation for multi-operation tools);
    * ``writes``: every call not marked read-only;
    * ``none``: nothing. For trusted set-ups only: every tool runs as soon as the model
      calls it (an MCP client's own approval prompt, if it has one, still applies).

    Memory writes are never held by this gate, whatever the policy: the block's
    permission decides them.
    """

    DESTRUCTIVE = "destructive"
    WRITES = "writes"
    NONE = "none"


def needs_approval(
    spec: ToolSpec, args: Any = None, policy: ApprovalPolicy = ApprovalPolicy.DESTRUCTIVE
) -> bool:
    """Whether a call of the tool ``spec`` with ``args`` waits for a human under
    ``policy`` (with ``args`` left out: whether any call of it may).

    Example:
        >>> needs_approval(spec, {"operation": "delete", "title": "x"})
        True
    """
    if spec.memory_gated:
        return False
    match ApprovalPolicy(policy):
        case ApprovalPolicy.NONE:
            return False
        case ApprovalPolicy.DESTRUCTIVE:
            return spec.is_destructive(args)
        case ApprovalPolicy.WRITES:
            if args is None:
                return spec.is_write
            return spec.annotations_for(args).read_only is not True
