"""Multi-operation inputs: a union discriminated on ``operation``, flattened to one object.

Providers want one object at the top of a tool's input (OpenAI rejects a top-level
``oneOf``/``anyOf``; Anthropic too), so a union such as::

    Annotated[Read | Write, Field(discriminator="operation")]

becomes one object whose ``operation`` property is a required string enum of every
operation, and whose other properties are the union of every operation's properties.

Decisions:

* A property several operations share with the *same* schema (descriptions and
  defaults aside) appears once. With *different* schemas it becomes ``anyOf`` of the
  distinct forms, each form's description naming the operations that use it. This
  never raises: the exact union is still what calls are validated against (by the
  caller, using :func:`satchel.schema.operations`), so the flat schema only has to
  guide the model.
* A property that is not required by every operation carries a note such as
  "Required for write." or "Optional for read, list."
* ``required`` is ``["operation"]`` plus the properties every operation requires.
* ``additionalProperties: false`` is kept only if every variant says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from satchel._errors import SchemaError
from satchel.schema._keywords import (
    JsonObject,
    add_note,
    as_list,
    as_object,
    canonical,
    is_object_schema,
    json_text,
    summary,
)

__all__ = ["DISCRIMINATOR", "OperationInfo", "flatten_operations", "union_variants"]

DISCRIMINATOR = "operation"
"""The one property name a top-level union may be discriminated on."""

Variant = tuple[tuple[str, ...], JsonObject]
"""The operation names a union branch serves, and the branch's schema."""


@dataclass(frozen=True, slots=True)
class OperationInfo:
    """What one operation of a multi-operation tool takes, from the exact union.

    Attributes:
        name: The operation's name, the value of the ``operation`` field.
        fields: The names of the operation's fields (its properties), without
            ``operation`` itself, in schema order.
        required: The names of the fields the operation requires, without
            ``operation``.
        description: The operation's own description (its model's docstring), if any.
    """

    name: str
    fields: tuple[str, ...]
    required: tuple[str, ...]
    description: str | None = None


def union_variants(top: JsonObject) -> list[Variant] | None:
    """The variants of a top-level union discriminated on ``operation``.

    Returns:
        ``None`` when ``top`` is not a union; otherwise one entry per branch.

    Raises:
        SchemaError: ``top`` is a union that is not discriminated on ``operation``, or
            two branches claim the same operation.
    """
    key = "oneOf" if "oneOf" in top else "anyOf" if "anyOf" in top else None
    if key is None:
        return None
    variants: list[Variant] = []
    seen: dict[str, int] = {}
    for index, branch in enumerate(as_list(top[key]) or []):
        obj = as_object(branch) or {}
        names = _operation_names(obj)
        if names is None:
            raise SchemaError(
                f"The top-level schema is a union ({key}), and satchel serves a top-level "
                f"union only when it is discriminated on an '{DISCRIMINATOR}' field: every "
                f"variant an object whose '{DISCRIMINATOR}' property is a literal string. "
                f"Variant {index} ({summary(obj)}) is not. Name the discriminator field "
                f"'{DISCRIMINATOR}', or put the union in a field of a model "
                f"(class Input(BaseModel): value: A | B).",
                details={"variant": index},
            )
        for name in names:
            if name in seen:
                raise SchemaError(
                    f"Operation {name!r} appears in variants {seen[name]} and {index} of "
                    f"the top-level union; each operation must have exactly one variant.",
                    details={"operation": name},
                )
            seen[name] = index
        variants.append((names, obj))
    return variants


def _operation_names(branch: JsonObject) -> tuple[str, ...] | None:
    if not is_object_schema(branch):
        return None
    field = as_object((as_object(branch.get("properties")) or {}).get(DISCRIMINATOR))
    if field is None:
        return None
    if isinstance(field.get("const"), str):
        return (field["const"],)
    values = as_list(field.get("enum"))
    if values and all(isinstance(v, str) for v in values):
        return tuple(values)
    return None


def operation_infos(variants: list[Variant]) -> dict[str, OperationInfo]:
    """One :class:`OperationInfo` per operation name, in union order."""
    result: dict[str, OperationInfo] = {}
    for names, branch in variants:
        fields = tuple(n for n in (as_object(branch.get("properties")) or {}) if n != DISCRIMINATOR)
        required = tuple(n for n in _required(branch) if n != DISCRIMINATOR)
        doc = branch.get("description")
        for name in names:
            result[name] = OperationInfo(
                name, fields, required, doc if isinstance(doc, str) else None
            )
    return result


def _required(schema: JsonObject) -> list[str]:
    return [n for n in as_list(schema.get("required")) or [] if isinstance(n, str)]


def _ops_phrase(ops: list[str]) -> str:
    """The operations, as a note names them: ``write``, or ``read, list``. Bare names
    (the enum states them) keep the notes short: every note is read on every listing."""
    return ", ".join(ops)


def _usage_note(required_in: list[str], optional_in: list[str], everywhere: bool) -> str | None:
    if everywhere and not required_in:
        return None  # optional for every operation: nothing to say
    parts: list[str] = []
    if required_in:
        parts.append(f"Required for {_ops_phrase(required_in)}")
    if optional_in:
        parts.append(f"{'optional' if parts else 'Optional'} for {_ops_phrase(optional_in)}")
    return "; ".join(parts) + "."


@dataclass(slots=True)
class _Use:
    ops: list[str]
    schema: JsonObject
    required: bool


def flatten_operations(top: JsonObject, variants: list[Variant]) -> JsonObject:
    """The one object schema standing for a union discriminated on ``operation``."""
    all_ops = [op for names, _ in variants for op in names]
    uses: dict[str, list[_Use]] = {}
    lead: str | None = None
    docs: list[str] = []
    for names, branch in variants:
        required = set(_required(branch))
        for name, prop in (as_object(branch.get("properties")) or {}).items():
            obj = as_object(prop) or {}
            if name == DISCRIMINATOR:
                if lead is None and isinstance(obj.get("description"), str):
                    lead = obj["description"]
                continue
            uses.setdefault(name, []).append(_Use(list(names), obj, name in required))
        doc = branch.get("description")
        if isinstance(doc, str) and doc.strip():
            docs.append(f"{' / '.join(repr(n) for n in names)}: {doc.strip()}")
    described = lead or "The operation to perform."
    for doc in docs:
        described = add_note(described, doc)
    properties: JsonObject = {
        DISCRIMINATOR: {"type": "string", "enum": all_ops, "description": described}
    }
    required_all = [DISCRIMINATOR]
    for name, group in uses.items():
        merged = _merge_uses(group)
        required_in = [op for use in group if use.required for op in use.ops]
        optional_in = [op for use in group if not use.required for op in use.ops]
        if len(required_in) == len(all_ops):
            required_all.append(name)
        else:
            everywhere = len(required_in) + len(optional_in) == len(all_ops)
            note = _usage_note(required_in, optional_in, everywhere)
            if note is not None:
                merged["description"] = add_note(merged.get("description"), note)
        properties[name] = merged
    result: JsonObject = {"type": "object"}
    if isinstance(top.get("description"), str):
        result["description"] = top["description"]
    result["properties"] = properties
    result["required"] = required_all
    if all(branch.get("additionalProperties") is False for _, branch in variants):
        result["additionalProperties"] = False
    return result


_SET_ASIDE = ("description", "default")


def _merge_uses(group: list[_Use]) -> JsonObject:
    """One schema for a property several operations declare."""
    forms: dict[str, tuple[JsonObject, list[_Use]]] = {}
    for use in group:
        body = {k: v for k, v in use.schema.items() if k not in _SET_ASIDE}
        forms.setdefault(canonical(body), (body, []))[1].append(use)
    if len(forms) == 1:
        body, members = next(iter(forms.values()))
        return {**_annotations(members), **body}
    branches: list[JsonObject] = []
    for body, members in forms.values():
        ops = [op for use in members for op in use.ops]
        branch = {**_annotations(members), **body}
        branch["description"] = add_note(branch.get("description"), f"Form for {_ops_phrase(ops)}.")
        branches.append(branch)
    return {"anyOf": branches}


def _annotations(members: list[_Use]) -> JsonObject:
    """Description and default for uses sharing one schema: common, or per operation."""
    out: JsonObject = {}
    for key in _SET_ASIDE:
        values: dict[str, tuple[Any, list[str]]] = {}
        for use in members:
            if key in use.schema:
                values.setdefault(canonical(use.schema[key]), (use.schema[key], []))[1].extend(
                    use.ops
                )
        if len(values) == 1:
            out[key] = next(iter(values.values()))[0]
        elif values and key == "description":
            text = ""
            for value, ops in values.values():
                text = add_note(text, f"For {_ops_phrase(ops)}: {value}")
            out[key] = text
        elif values:  # defaults differ: say so in words, keep none
            text = "; ".join(
                f"{json_text(value)} for {_ops_phrase(ops)}" for value, ops in values.values()
            )
            out["description"] = add_note(out.get("description"), f"Default: {text}.")
    return out
