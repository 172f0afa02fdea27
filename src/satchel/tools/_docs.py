"""Docstrings made fit for a model: the reST markup of Python docs (````name````,
``:class:`~pkg.Name```) becomes the Markdown a model reads everywhere else.

Tool descriptions and the field descriptions of input and output models come from
docstrings written for Sphinx. A model sees that markup as noise, and a provider's
console shows it raw, so :func:`~satchel.tools.build_plan` passes every description of
a typed tool through :func:`plain_schema` once, when the tool is made.
"""

from __future__ import annotations

import re
from typing import Any, cast

__all__ = ["plain_schema", "plain_text"]

# :class:`~pkg.mod.Name`, :func:`name`, :py:meth:`Label <target>`, :data:`X`
_ROLE = re.compile(r":(?:[A-Za-z]+:)?[A-Za-z]+:`(?P<body>[^`]+)`")
# ``literal``
_LITERAL = re.compile(r"``(?P<body>[^`]+?)``")
# a backslash-escaped space after inline markup: :class:`Endpoint`\ s
_ESCAPED_SPACE = re.compile(r"`\\ ")

# Keywords whose values are data, not schema: a description inside them is left alone.
_DATA_KEYWORDS = frozenset({"default", "examples", "const", "enum", "example"})
# Keywords whose values map names to schemas.
_NAMED_SCHEMAS = frozenset({"properties", "$defs", "definitions", "patternProperties"})


def _role(match: re.Match[str]) -> str:
    body = match.group("body").strip()
    labelled = re.fullmatch(r"(?P<label>.+?)\s*<[^<>]+>", body)
    if labelled is not None:
        return f"`{labelled.group('label')}`"
    if body.startswith("~"):
        body = body[1:].rsplit(".", 1)[-1]
    return f"`{body.lstrip('!')}`"


def plain_text(text: str) -> str:
    """``text`` with reST inline markup turned into Markdown.

    ````search```` becomes ```search```, ``:class:`~satchel.memory.Block``` becomes
    ```Block```, ``:func:`label <target>``` becomes ```label```; everything else is
    kept as written.

    Example:
        >>> plain_text("The input of ``search``; see :class:`~satchel.Block`.")
        'The input of `search`; see `Block`.'
    """
    if "`" not in text:
        return text
    text = _ROLE.sub(_role, text)
    text = _LITERAL.sub(lambda m: f"`{m.group('body')}`", text)
    return _ESCAPED_SPACE.sub("`", text)


def plain_schema(schema: Any) -> Any:
    """A copy of the JSON schema ``schema`` with every ``description`` passed through
    :func:`plain_text` (values under ``default``, ``examples``, ``const`` and ``enum``
    are data and stay as they are)."""
    # isinstance cannot say what a JSON value holds: an array of schemas, an object
    # keyed by strings; the casts say it
    if isinstance(schema, list):
        items = cast("list[Any]", schema)
        return [plain_schema(item) for item in items]
    if not isinstance(schema, dict):
        return schema
    keywords = cast("dict[str, Any]", schema)
    cleaned: dict[str, Any] = {}
    for key, value in keywords.items():
        if key == "description" and isinstance(value, str):
            cleaned[key] = plain_text(value)
        elif key in _DATA_KEYWORDS:
            cleaned[key] = value
        elif key in _NAMED_SCHEMAS and isinstance(value, dict):
            # keys here are field or definition names, never keywords
            named = cast("dict[str, Any]", value)
            cleaned[key] = {k: plain_schema(v) for k, v in named.items()}
        else:
            cleaned[key] = plain_schema(value)
    return cleaned
