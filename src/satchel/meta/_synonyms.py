"""The seeds' category and action names, as synonyms the catalog's filters answer to.

AgenticPal (seed 004) files mail under ``gmail``, gives each write tool the action
``write`` and each listing the action ``list``, and files ``send_email`` under
``create``. satchel's toolkit says ``email``, ``send`` and ``read``. So that the
seed's own ``discover_tools`` calls find what they found there, a filter naming a seed
word also matches the tools it meant; a tool's declared category and actions (what
its ``discover_tools`` row shows, and the overview counts) stay its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from satchel.tools import ToolSpec

__all__ = ["CATEGORY_SYNONYMS", "implied_actions"]

CATEGORY_SYNONYMS: Final[Mapping[str, str]] = {"gmail": "email"}
"""A seed's category name (case-folded) and the satchel category it stands for."""


def implied_actions(spec: ToolSpec) -> frozenset[str]:
    """The seed actions a tool answers to besides the ones it declares:

    * ``write`` for every tool that is not read-only (AgenticPal's write tools all carry
      it);
    * ``list`` for a ``read`` tool whose name starts with ``list_``;
    * ``create`` for a ``send`` tool (AgenticPal files ``send_email`` under it).

    Example:
        >>> sorted(implied_actions(registry.get("add_calendar_event").spec))
        ['write']
    """
    declared = set(spec.actions)
    implied: set[str] = set()
    if spec.is_write:
        implied.add("write")
    if "read" in declared and spec.name.startswith("list_"):
        implied.add("list")
    if "send" in declared:
        implied.add("create")
    return frozenset(implied - declared)
