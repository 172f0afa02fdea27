"""Conditions on a chain's data: JMESPath expressions, or Python predicates.

The serialisable form is a `JMESPath <https://jmespath.org>`_ expression, evaluated
with the ``jmespath`` library (AWS's, kept since 2013, pure Python, a published spec
and compliance suite): a small, safe language over JSON values with no access to
Python, so a chain can be written in a config file and shown to a model. It was chosen
over a hand-written language and over ``simpleeval`` (Python syntax, so not portable)
and CEL (a much larger implementation for the same comparisons).

Truth follows JMESPath: ``false``, ``null``, ``""``, ``[]`` and ``{}`` are false,
everything else (``0`` included) is true. Literals are written in backticks or as raw
strings: ``label == 'urgent'``, ``count > `3```, ``length(items) > `0` && !draft``.

A Python predicate (any ``callable(data) -> bool``) works in the library; it has no
serialisable form, so a chain using one cannot be written out as config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import jmespath
from jmespath.exceptions import JMESPathError
from jmespath.parser import ParsedResult

from satchel._errors import InvalidInputError, SatchelUsageError

__all__ = ["Condition", "Expr", "Predicate", "as_condition", "truthy"]

Predicate = Callable[[Mapping[str, Any]], bool]
"""A Python condition: takes the chain's data (see :class:`Expr`), returns a bool."""

_MAX_EXPRESSION = 2000
# JMESPath's own evaluation raises these for values of the wrong type deep inside a
# function, besides its documented JMESPathError tree.
_EVAL_ERRORS = (JMESPathError, RecursionError, TypeError, ValueError, OverflowError)


def truthy(value: Any) -> bool:
    """JMESPath's truth: ``false``, ``null``, ``""``, ``[]`` and ``{}`` are false."""
    if value is None or value is False:
        return False
    if isinstance(value, str | list | dict):
        return len(cast(str | list[Any] | dict[str, Any], value)) > 0
    return True


def _roots(node: Mapping[str, Any]) -> set[str] | None:
    """The top-level field names an expression reads, or ``None`` when it reads the
    whole document (``@``) or a form not analysed here."""
    kind = node.get("type")
    children = cast(list[Mapping[str, Any]], node.get("children", []))
    if kind == "field":
        return {str(node["value"])}
    if kind in ("literal", "raw_string", "index", "slice"):
        return set()
    if kind in (
        "subexpression",
        "index_expression",
        "projection",
        "value_projection",
        "filter_projection",
        "flatten",
        "pipe",
    ):
        return _roots(children[0]) if children else set()
    if kind in (
        "comparator",
        "and_expression",
        "or_expression",
        "not_expression",
        "function_expression",
        "multi_select_list",
        "multi_select_dict",
        "key_val_pair",
    ):
        found: set[str] = set()
        for child in children:
            sub = _roots(child)
            if sub is None:
                return None
            found |= sub
        return found
    if kind == "expref":  # evaluated per element by sort_by() and friends
        return set()
    return None


@dataclass(frozen=True, slots=True)
class Expr:
    """A JMESPath condition, checked when it is made.

    Args:
        text: The expression, such as ``"label == 'urgent'"``.

    Raises:
        SatchelUsageError: the expression does not parse; ``details`` carry the
            ``expression``, the ``problem`` and, when known, the ``position``.

    Example:
        >>> Expr("count > `3`").evaluate({"count": 5})
        True
    """

    text: str
    _parsed: ParsedResult = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        text = self.text
        if not isinstance(text, str) or not text.strip():  # pyright: ignore[reportUnnecessaryIsInstance]
            raise SatchelUsageError(
                "A condition must be a non-empty JMESPath expression.",
                details={"expression": repr(text), "problem": "empty"},
            )
        if len(text) > _MAX_EXPRESSION:
            raise SatchelUsageError(
                f"A condition may be at most {_MAX_EXPRESSION} characters long.",
                details={"expression": text[:80], "problem": "too long"},
            )
        try:
            parsed = jmespath.compile(text)
        except JMESPathError as exc:
            position = getattr(exc, "lex_position", None)
            details: dict[str, Any] = {"expression": text, "problem": str(exc).split("\n")[0]}
            if isinstance(position, int):
                details["position"] = position
            raise SatchelUsageError(
                f"The condition {text!r} is not a valid JMESPath expression: {details['problem']}",
                details=details,
            ) from None
        except (RecursionError, ValueError, TypeError) as exc:
            raise SatchelUsageError(
                f"The condition {text[:80]!r} cannot be parsed ({type(exc).__name__}).",
                details={"expression": text, "problem": type(exc).__name__},
            ) from None
        object.__setattr__(self, "_parsed", parsed)

    def search(self, data: Any) -> Any:
        """The expression's value on ``data``.

        Raises:
            InvalidInputError: the expression cannot be evaluated on this data (a
                function given a value of the wrong type); ``details`` say why.
        """
        try:
            return self._parsed.search(data)
        except _EVAL_ERRORS as exc:
            raise InvalidInputError(
                f"The condition {self.text!r} cannot be evaluated on this data: "
                f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                details={"expression": self.text, "problem": type(exc).__name__},
            ) from None

    def evaluate(self, data: Any) -> bool:
        """Whether the expression is true on ``data`` (JMESPath truth, see
        :func:`truthy`).

        Raises:
            InvalidInputError: as :meth:`search`.
        """
        return truthy(self.search(data))

    def roots(self) -> frozenset[str] | None:
        """The top-level names the expression reads (``None``: it reads the whole data
        or uses a form not analysed), for checking a chain when it is registered."""
        found = _roots(cast(Mapping[str, Any], self._parsed.parsed))
        return None if found is None else frozenset(found)


Condition = Expr | Predicate
"""A step's condition: a JMESPath :class:`Expr` (serialisable) or a Python predicate."""


def as_condition(value: str | Condition | None) -> Condition | None:
    """A string becomes an :class:`Expr`; an ``Expr`` or a callable is kept.

    Raises:
        SatchelUsageError: neither, or an expression that does not parse.
    """
    if value is None or isinstance(value, Expr):
        return value
    if isinstance(value, str):
        return Expr(value)
    if callable(value):
        return value
    raise SatchelUsageError(
        f"A condition is a JMESPath expression or a callable, not {type(value).__name__}."
    )
