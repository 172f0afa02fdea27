"""AgenticPal's ``discover_tools`` rows and ``get_tool_schema`` fields (seed 004), for
:class:`~satchel.meta.MetaTools` under the ``agenticpal`` profile.

A row is an object (``name``, ``summary``, ``category``, ``actions`` as a list,
``is_write``), with the seed's own category and action names: mail is ``gmail``, and
the actions a seed's filter finds a tool by (:func:`~satchel.meta._synonyms.implied_actions`)
follow its declared ones. A schema is the seed's five fields: ``name``,
``description``, ``parameters`` (the input schema's properties), ``required`` and
``is_write``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from satchel.meta._entry import CatalogEntry
from satchel.meta._synonyms import CATEGORY_SYNONYMS, implied_actions
from satchel.registry import BaseRegistry
from satchel.tools import ToolSpec

__all__ = ["seed_rows", "seed_schema"]

_SEED_CATEGORY = {ours: seed for seed, ours in CATEGORY_SYNONYMS.items()}


def seed_rows(entries: Sequence[CatalogEntry], catalog: BaseRegistry) -> list[dict[str, Any]]:
    """``entries`` as AgenticPal's ``discover_tools`` rows."""
    rows: list[dict[str, Any]] = []
    for entry in entries:
        tool = catalog.get(entry.name)
        implied = sorted(implied_actions(tool.spec)) if tool is not None else []
        category = entry.category
        rows.append(
            {
                "name": entry.name,
                "summary": entry.summary,
                "category": _SEED_CATEGORY.get(category, category) if category else category,
                "actions": [*entry.actions, *implied],
                "is_write": entry.is_write,
            }
        )
    return rows


def seed_schema(spec: ToolSpec) -> dict[str, Any]:
    """``spec`` as AgenticPal's ``get_tool_schema`` answer."""
    schema = spec.input_schema
    return {
        "name": spec.name,
        "description": spec.description,
        "parameters": dict(schema.get("properties", {})),
        "required": list(schema.get("required", [])),
        "is_write": spec.is_write,
    }
