"""Rewrites shared by the restrictive dialects (OpenAI strict, Gemini).

When a provider cannot take a keyword, the constraint is not silently lost: it is
dropped from the schema and said in words in the description ("At most 5 characters.",
"Default: 10."), which the model reads.
"""

from __future__ import annotations

from typing import Any

from satchel.schema._keywords import (
    TYPE_KEYWORDS,
    JsonObject,
    as_list,
    as_object,
    canonical,
    describe,
    json_text,
    summary,
    types_of,
)

__all__ = ["constraint_note", "reshape"]


def _count(value: object, one: str, many: str) -> str:
    return one if value == 1 else many.format(json_text(value))


def constraint_note(key: str, value: Any) -> str | None:
    """A sentence saying what keyword ``key`` with ``value`` required, or ``None``.

    ``None`` means the keyword is an annotation with nothing worth telling a model
    (``readOnly``, ``$comment``, unknown extension keywords).
    """
    obj = as_object(value)
    match key:
        case "minLength":
            return _count(value, "At least 1 character.", "At least {} characters.")
        case "maxLength":
            return _count(value, "At most 1 character.", "At most {} characters.")
        case "pattern":
            return f"Must match the regular expression {json_text(value)}."
        case "format":
            return f"Format: {value}."
        case "minimum":
            return f"At least {json_text(value)}."
        case "maximum":
            return f"At most {json_text(value)}."
        case "exclusiveMinimum":
            return f"Greater than {json_text(value)}."
        case "exclusiveMaximum":
            return f"Less than {json_text(value)}."
        case "multipleOf":
            return f"A multiple of {json_text(value)}."
        case "minItems":
            return _count(value, "At least 1 item.", "At least {} items.")
        case "maxItems":
            return _count(value, "At most 1 item.", "At most {} items.")
        case "uniqueItems":
            return "Items must be unique." if value is True else None
        case "minProperties":
            return _count(value, "At least 1 key.", "At least {} keys.")
        case "maxProperties":
            return _count(value, "At most 1 key.", "At most {} keys.")
        case "default":
            return f"Default: {json_text(value)}."
        case "examples":
            values = as_list(value) or []
            return f"Examples: {', '.join(json_text(v) for v in values)}." if values else None
        case "deprecated":
            return "Deprecated." if value is True else None
        case "const":
            return f"Must be {json_text(value)}."
        case "enum":
            return f"One of: {', '.join(json_text(v) for v in as_list(value) or [])}."
        case "not" if obj is not None:
            return f"Must not be {describe(obj)}." if obj else None
        case "contains" if obj is not None:
            return f"Must contain an item that is {describe(obj)}."
        case "propertyNames" if obj is not None:
            return f"Keys: {summary(obj)}" + (
                f" matching {json_text(obj['pattern'])}." if "pattern" in obj else "."
            )
        case "patternProperties" if obj is not None:
            return " ".join(
                f"Keys matching {json_text(p)} take values that are {describe(as_object(s) or {})}."
                for p, s in obj.items()
            )
        case "additionalProperties" if obj is not None:
            return f"Other keys are allowed, each with a value that is {describe(obj)}."
        case "additionalProperties" if value is True:
            return "Other keys are allowed."
        case "dependentRequired" if obj is not None:
            return " ".join(
                f"If {json_text(k)} is given, also give {', '.join(map(json_text, names))}."
                for k, v in obj.items()
                if (names := as_list(v)) is not None
            )
        case "contentMediaType":
            return f"Media type: {value}."
        case "contentEncoding":
            return f"Encoding: {value}."
        case "if" | "then" | "else" | "dependentSchemas" | "allOf" if value:
            return f"Also must satisfy {key}: {json_text(value)[:200]}."
        case _:
            return None


def reshape(schema: JsonObject) -> tuple[JsonObject, list[str]]:
    """Rewrite constructs the restrictive dialects lack into ones they have.

    * ``oneOf`` becomes ``anyOf`` (neither provider documents ``oneOf``; for a model
      the difference does not matter, and validation uses the exact schema);
    * a tuple (``prefixItems``) becomes ``items`` of the item forms, with the order
      said in words;
    * a type list with several non-null types becomes ``anyOf`` of one branch per type,
      each with the keywords that constrain that type.

    Returns:
        The new schema (``schema`` itself is not changed) and notes for its description.
    """
    out = dict(schema)
    notes: list[str] = []
    if "oneOf" in out:
        branches = out.pop("oneOf")
        if "anyOf" in out:
            notes.append(f"Also must be exactly one of: {json_text(branches)[:200]}.")
        else:
            out["anyOf"] = branches
    prefix = as_list(out.get("prefixItems"))
    if prefix is not None:
        del out["prefixItems"]
        rest = out.pop("items", None)
        forms: dict[str, Any] = {}
        for form in [*prefix, *([rest] if as_object(rest) is not None else [])]:
            forms.setdefault(canonical(form), form)
        if len(forms) == 1:
            out["items"] = next(iter(forms.values()))
        elif forms:
            out["items"] = {"anyOf": list(forms.values())}
        described = ", ".join(summary(as_object(p) or {}) for p in prefix)
        notes.append(f"Items in this order: {described}.")
    kinds = types_of(out)
    real = [k for k in kinds if k != "null"]
    if len(real) > 1 and "anyOf" not in out:
        typed = {k for t in real for k in TYPE_KEYWORDS.get(t, ())}
        branches: list[Any] = []
        for kind in real:
            branch: JsonObject = {"type": kind}
            branch.update((k, v) for k, v in out.items() if k in TYPE_KEYWORDS.get(kind, ()))
            branches.append(branch)
        if "null" in kinds:
            branches.append({"type": "null"})
        out = {k: v for k, v in out.items() if k != "type" and k not in typed}
        out["anyOf"] = branches
    return out, notes
