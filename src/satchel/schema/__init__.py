"""Provider-safe JSON schemas for tool inputs.

Pure functions on JSON-schema dicts, in three steps:

1. :func:`normalize` turns what pydantic produces for a tool's input into one
   self-contained object schema: ``$ref`` inlined, titles stripped, cycles rejected,
   a union discriminated on ``operation`` flattened (:func:`operations` keeps the
   exact per-operation facts for error messages).
2. :func:`for_dialect` adapts it to one provider (:data:`DIALECTS`), and
   :func:`tool_definition` wraps it in that provider's tool-definition shape;
   :func:`drop_strict_nulls` turns a strict-mode call's ``null`` placeholders back into
   absent fields before validation.
3. :func:`check` and :func:`check_definition` prove the result obeys the provider's
   documented rules, returning :class:`Violation` records.

Example:
    >>> from pydantic import BaseModel, Field
    >>> class CountIn(BaseModel):
    ...     text: str = Field(description="Text to count words in")
    >>> params = normalize(CountIn.model_json_schema())
    >>> definition = tool_definition("word_count", "Counts words.", params, "openai-strict")
    >>> check_definition(definition, "openai-strict")
    []
"""

from satchel.schema._check import Violation, check
from satchel.schema._definition import EXAMPLES_META_KEY, check_definition, tool_definition
from satchel.schema._dialects import DIALECTS, Dialect, for_dialect
from satchel.schema._normalize import normalize, operations
from satchel.schema._operations import OperationInfo
from satchel.schema._strict import drop_strict_nulls

__all__ = [
    "DIALECTS",
    "EXAMPLES_META_KEY",
    "Dialect",
    "OperationInfo",
    "Violation",
    "check",
    "check_definition",
    "drop_strict_nulls",
    "for_dialect",
    "normalize",
    "operations",
    "tool_definition",
]
