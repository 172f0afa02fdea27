"""Seeded random tool arguments built from a tool's JSON schema, for ``fuzz_soak.py``.

:class:`CaseMaker` draws, for one input schema, a mix of

* **valid** arguments (every required field, some optional ones, values of the right
  type and bounds; strings from a pool of realistic words, dates and ids the tools gave
  back earlier in the run, so updates and deletes reach real records);
* **near-valid** ones (a required field missing, an unknown field, one field of the
  wrong type, an enum value or operation that does not exist, a number out of range);
* **hostile** ones (strings of up to a megabyte, NUL, control, bidi and line-separator
  characters, lone surrogates, FTS and JMESPath syntax, NaN, infinities, integers past
  64 bits, values nested thousands deep, a random JSON value instead of the object).

Every draw comes from one ``random.Random``, so a run is reproduced by its seed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from typing import Any

__all__ = ["HOSTILE_STRINGS", "CaseMaker", "nested"]

HOSTILE_STRINGS = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\x01\x02\x1b[31m\x7f",
    "\r\n",
    "Subject: x\r\nBcc: eve@evil.test",
    "\u2028\u2029\x85",
    "\u202eevil\u202c",
    "\ufeff",
    "\ud800",
    "a\udfffb",
    '"',
    "'",
    "\\",
    '" OR 1=1 --',
    'NEAR("a" "b")',
    "a OR b AND NOT c*",
    "*",
    "^",
    "{}",
    "[]",
    "@.x[?y=='z']",
    "`foo`",
    "length(@) > `3`",
    "🙂" * 40,
    "天气 forecast",
    "x" * 501,
    "y" * 100_000,
    "BEGIN:VEVENT\r\nEND:VCALENDAR",
    "../../etc/passwd",
    "file:///etc/passwd",
    "http://user:pw@127.0.0.1:1/",
    "%s%n%x",
    "NaN",
    "-1",
    "9" * 400,
    "0000-00-00",
    "9999-12-31T23:59:60Z",
    "yesterday at 25pm",
    "every 0 days",
    "FREQ=SECONDLY;INTERVAL=1",
    "FREQ=DAILY;COUNT=999999999",
    "RRULE:FREQ=YEARLY;BYMONTH=13",
]
_WORDS = [
    "dentist",
    "team lunch",
    "Ada",
    "report",
    "Paris",
    "call mum",
    "weekly review",
    "ship it",
    "inbox",
    "x",
]
_DATES = [
    "today",
    "tomorrow",
    "tomorrow at 3pm",
    "next Tuesday morning",
    "Friday",
    "in 2 hours",
    "in 10 minutes",
    "2026-12-01",
    "2026-12-01T09:30:00",
    "2026-12-01T09:30:00+01:00",
    "last monday",
    "noon",
    "1 hour",
    "30 minutes",
    "2 days",
    "every week",
    "daily",
    "weekly on Monday",
    "monthly",
    "2020-02-30",
    "1970-01-01",
    "9999-12-31",
    "9999-12-31T23:30",
    "0001-01-01T00:30",
    "in 3 hours",
]
_EMAILS = ["ada@example.test", "Bob <bob@example.test>", "a@b.c, c@d.e", "not-an-address"]


def nested(depth: int) -> Any:
    """A value nested ``depth`` levels deep (lists and objects alternately)."""
    value: Any = "deep"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


class CaseMaker:
    """Draws arguments for one schema (see the module docstring).

    Args:
        rng: The run's random source.
        seen: Strings the tools gave back, by field name (``event_id``, ``task_id``...),
            shared by every tool's maker and filled by the caller as results come in.
    """

    def __init__(self, rng: random.Random, seen: dict[str, list[str]]) -> None:
        self.rng = rng
        self.seen = seen

    # -- the three kinds of case ----------------------------------------------------

    def case(self, schema: dict[str, Any]) -> tuple[str, Any]:
        """``(kind, arguments)``: kind is ``valid``, ``near-valid`` or ``hostile``."""
        roll = self.rng.random()
        if roll < 0.5:
            return "valid", self.valid(schema)
        if roll < 0.75:
            return "near-valid", self.near_valid(schema)
        return "hostile", self.hostile(schema)

    def valid(self, schema: dict[str, Any], name: str = "") -> Any:
        """A value that obeys ``schema`` (as far as a JSON schema says)."""
        rng = self.rng
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return rng.choice(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return self.valid(rng.choice(schema[key]), name)
        if schema.get("allOf"):
            return self.valid(schema["allOf"][0], name)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = rng.choice(kind)  # pyright: ignore[reportUnknownArgumentType]
        if kind == "object" or (kind is None and "properties" in schema):
            return self._object(schema)
        if kind == "array":
            items = schema.get("items") or {"type": "string"}
            low = int(schema.get("minItems", 0))
            high = min(int(schema.get("maxItems", low + 3)), low + 4)
            return [self.valid(items, name) for _ in range(rng.randint(low, max(low, high)))]
        if kind == "string":
            return self._string(schema, name)
        if kind == "integer":
            low = int(schema.get("minimum", -5))
            high = int(schema.get("maximum", low + 60))
            return rng.randint(low, max(low, high))
        if kind == "number":
            low = float(schema.get("minimum", -10.0))
            high = float(schema.get("maximum", low + 100.0))
            return rng.uniform(low, high)
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "null":
            return None
        return rng.choice([None, 1, "x", True, [], {}])

    def near_valid(self, schema: dict[str, Any]) -> Any:
        """A valid case with one thing wrong."""
        rng = self.rng
        args = self.valid(schema)
        if not isinstance(args, dict):
            return args
        props: dict[str, Any] = schema.get("properties", {})
        required = [k for k in schema.get("required", []) if k in args]
        how = rng.randrange(6)
        if how == 0 and required:
            del args[rng.choice(required)]
        elif how == 1:
            args[rng.choice(["colour", "operation", "id", "_meta", "", "title "])] = self.valid({})
        elif how == 2 and props:
            key = rng.choice(list(props))
            args[key] = self._wrong_type(props[key])
        elif how == 3 and props:
            key = rng.choice(list(props))
            args[key] = rng.choice(["frobnicate", "DELETE", "", "none", "Operation"])
        elif how == 4 and props:
            key = rng.choice(list(props))
            args[key] = rng.choice([-1, 0, 10**6, -(2**63), 2**64, 1.5, -0.0])
        elif props:
            key = rng.choice(list(props))
            args[key] = None
        return args

    def hostile(self, schema: dict[str, Any]) -> Any:
        """A case meant to break things."""
        rng = self.rng
        how = rng.randrange(8)
        if how == 0:
            return self._junk()
        args = self.valid(schema)
        if not isinstance(args, dict):
            return args
        props = list(schema.get("properties", {})) or ["x"]
        for _ in range(rng.randint(1, 3)):
            key = rng.choice(props)
            args[key] = self._hostile_value(key)
        return args

    # -- helpers ----------------------------------------------------------------------

    def _object(self, schema: dict[str, Any]) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        out: dict[str, Any] = {}
        for key, sub in props.items():
            if key in required or self.rng.random() < 0.4:
                out[key] = self.valid(sub if isinstance(sub, dict) else {}, key)
        return out

    def _string(self, schema: dict[str, Any], name: str) -> str:
        rng = self.rng
        if "enum" in schema:
            return str(rng.choice(schema["enum"]))
        low = int(schema.get("minLength", 0))
        high = int(schema.get("maxLength", 200))
        pool = self._pool(name)
        text = rng.choice(pool)
        if rng.random() < 0.1:
            text = "".join(rng.choice("abc xyz-_.:/@ÅéΩ中") for _ in range(rng.randint(0, 40)))
        if len(text) < low:
            text = text + "x" * (low - len(text))
        return text[: max(high, low)]

    def _pool(self, name: str) -> list[str]:
        lowered = name.lower()
        found = self.seen.get(name, [])
        if found and self.rng.random() < 0.7:
            return found[-50:]
        if lowered.endswith("_id") or lowered == "id":
            return [*found[-50:], "nope", "tasks", "0", "INBOX:1", "Sent:1"]
        if any(w in lowered for w in ("time", "due", "date", "when", "start", "end", "at")):
            return _DATES
        if any(w in lowered for w in ("duration", "every", "recurrence", "repeat")):
            return _DATES
        if lowered in ("to", "cc", "bcc", "sender", "from") or "email" in lowered:
            return _EMAILS
        if "tool" in lowered:
            return [*self.seen.get("tool_name", []), "nope", "list_tasks"]
        if "folder" in lowered:
            return ["INBOX", "Sent", "Drafts", "nope"]
        return _WORDS

    def _wrong_type(self, sub: dict[str, Any]) -> Any:
        kind = sub.get("type")
        choices: list[Any] = [
            123,
            -1.5,
            True,
            None,
            ["a"],
            {"a": 1},
            "text",
            "2",
            "true",
            "",
        ]
        if kind == "string":
            choices = [c for c in choices if not isinstance(c, str)]
        return self.rng.choice(choices)

    def _hostile_value(self, name: str) -> Any:
        rng = self.rng
        how = rng.randrange(9)
        if how == 0:
            return rng.choice(HOSTILE_STRINGS)
        if how == 1:
            return "z" * rng.choice([1_000, 50_000, 1_000_000])
        if how == 2:
            return rng.choice([math.nan, math.inf, -math.inf, 2**80, -(2**80), 1e308, -0.0])
        if how == 3:
            return nested(rng.randint(50, 3_000))
        if how == 4:
            return [rng.choice(HOSTILE_STRINGS) for _ in range(rng.randint(100, 3_000))]
        if how == 5:
            return {rng.choice(HOSTILE_STRINGS): self._junk() for _ in range(4)}
        if how == 6:
            base = rng.choice(self._pool(name))
            return base + rng.choice(HOSTILE_STRINGS)
        if how == 7:
            return "".join(chr(rng.randrange(0, 0x110000)) for _ in range(rng.randint(1, 60)))
        return self._junk()

    def _junk(self) -> Any:
        rng = self.rng
        scalars: list[Any] = [None, True, 0, -1, 2**70, math.nan, "x", "", "\x00", 1.5]
        depth = rng.randint(0, 3)
        value: Any = rng.choice(scalars)
        for _ in range(depth):
            value = rng.choice([[value, rng.choice(scalars)], {rng.choice(_WORDS): value}])
        return value

    def remember(self, output: Any, keys: Iterable[str] = ()) -> None:
        """Keep the ids (and other short strings) of a tool's output for later cases."""
        stack = [output]
        wanted = set(keys)
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                for key, value in item.items():  # pyright: ignore[reportUnknownVariableType]
                    if isinstance(value, str) and (key in wanted or str(key).endswith("_id")):
                        bucket = self.seen.setdefault(str(key), [])  # pyright: ignore[reportUnknownArgumentType]
                        if len(value) <= 500 and value not in bucket[-50:]:
                            bucket.append(value)
                            del bucket[:-200]
                    elif isinstance(value, (dict, list)):
                        stack.append(value)
            elif isinstance(item, list):
                stack.extend(item)  # pyright: ignore[reportUnknownArgumentType]
