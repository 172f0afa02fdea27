"""Tool definitions per dialect for a registry's :meth:`~satchel.ToolRegistry.schemas`:
one per name, or every version, each with the hints of all its operations."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal

from satchel._errors import SatchelUsageError
from satchel.registry._versions import version_alias
from satchel.schema import Dialect, tool_definition
from satchel.tools import BaseTool, ToolSpec

__all__ = ["definitions"]

logger = logging.getLogger("satchel.registry")


def _spec_annotations(spec: ToolSpec) -> dict[str, bool | None]:
    """The tool-level hints, taking every operation of a multi-operation tool into
    account (destructive if any operation is, read-only only if all are)."""
    hints: dict[str, bool | None] = spec.annotations.model_dump()
    if spec.operations:
        if spec.is_destructive():
            hints["destructive"] = True
        hints["read_only"] = True if not spec.is_write else (hints["read_only"] and None)
    return hints


def definitions(
    tools: Mapping[str, BaseTool],
    versions: Mapping[str, Mapping[str, BaseTool]],
    dialect: Dialect,
    which: Literal["default", "all"],
) -> list[dict[str, Any]]:
    """The definitions of ``tools`` (name -> the default version) in ``dialect``; with
    ``which="all"``, each name's other ``versions`` follow it. A tool the dialect
    cannot express is left out with a warning naming it."""
    out: list[dict[str, Any]] = []
    for spec in _listed(tools, versions, which):
        definition = _definition(tools, versions, spec, dialect)
        if definition is not None:
            out.append(definition)
    return out


def _listed(
    tools: Mapping[str, BaseTool],
    versions: Mapping[str, Mapping[str, BaseTool]],
    which: Literal["default", "all"],
) -> list[ToolSpec]:
    specs = [t.spec for t in tools.values()]
    if which == "default" or not versions:
        return specs
    out: list[ToolSpec] = []
    for spec in specs:
        out.append(spec)
        others = versions.get(spec.name, {})
        out += [t.spec for v, t in others.items() if v != spec.version]
    return out


def _definition(
    tools: Mapping[str, BaseTool],
    versions: Mapping[str, Mapping[str, BaseTool]],
    s: ToolSpec,
    dialect: Dialect,
) -> dict[str, Any] | None:
    default = tools.get(s.name)
    listed = s.name
    description = s.description
    if default is not None and s.version is not None and default.spec.version != s.version:
        listed = version_alias(s.name, s.version)
        description = f"(Version {s.version} of {s.name}.) {description}"
    if s.deprecated:
        description = f"(Deprecated: {s.deprecated}) {description}"
    try:
        definition = tool_definition(
            listed,
            description,
            s.input_schema,
            dialect,
            output_schema=s.output_schema,
            annotations=_spec_annotations(s),
            examples=s.examples,
        )
    except SatchelUsageError as exc:
        logger.warning("the tool %r is left out of the %s schemas: %s", listed, dialect, exc)
        return None
    if dialect == "mcp" and s.version is not None:
        meta: dict[str, Any] = {
            "satchel/version": s.version,
            "satchel/versions": list(versions.get(s.name, {})),
        }
        if s.deprecated:
            meta["satchel/deprecated"] = s.deprecated
        if listed != s.name:
            meta["satchel/name"] = s.name
        definition["_meta"] = {**definition.get("_meta", {}), **meta}
    return definition
