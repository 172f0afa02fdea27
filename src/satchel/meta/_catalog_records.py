"""The records of :class:`~satchel.meta.CatalogIndex` and the reads over them: a tool's
:class:`ToolRecord`, its entry, the counts and tool names per category and per action,
and the filters a search starts from.

:class:`CatalogRecords` is the root of the index's parts (the index is built and kept
current in :mod:`satchel.meta._catalog`); it holds no state of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import cast

import numpy as np
import numpy.typing as npt

from satchel._errors import SatchelUsageError
from satchel.meta._entry import CatalogEntry
from satchel.tools import ToolSpec

__all__ = ["CatalogRecords", "ToolRecord", "slot_list"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolRecord:
    """What the index keeps of one tool."""

    slot: int
    spec: ToolSpec
    entry: CatalogEntry
    category: str
    actions: frozenset[str]
    texts: tuple[str, str]
    """What the description and the name vectors are computed from."""
    keys: tuple[str, str]


def slot_list(array: npt.NDArray[np.intp]) -> list[int]:
    """``array``'s slots as a list of ints."""
    return cast(list[int], array.tolist())


def _fold(values: Iterable[str]) -> dict[str, str]:
    return {v.casefold(): v for v in values}


class CatalogRecords:
    """The reads over the records of :class:`~satchel.meta.CatalogIndex` (see the
    module docstring); the index supplies the attributes below."""

    _lock: threading.RLock
    _records: dict[str, ToolRecord]
    _by_category: dict[str, set[str]]
    _by_action: dict[str, set[str]]
    _all_slots: npt.NDArray[np.intp] | None

    def __len__(self) -> int:
        return len(self._records)

    def entry(self, name: str) -> CatalogEntry | None:
        """The entry of the tool called ``name``, or ``None``."""
        record = self._records.get(name)
        return record.entry if record is not None else None

    def entries(self) -> list[CatalogEntry]:
        """Every tool's entry, in registration order."""
        with self._lock:
            return [r.entry for r in self._records.values()]

    def categories(self) -> dict[str, int]:
        """Tool count per category (tools without one under ``"uncategorized"``),
        sorted by name."""
        with self._lock:
            return {c: len(n) for c, n in sorted(self._by_category.items())}

    def actions(self) -> dict[str, int]:
        """Tool count per declared action, sorted by name."""
        with self._lock:
            return {a: len(n) for a, n in sorted(self._by_action.items())}

    def by_category(self) -> dict[str, list[str]]:
        """The tool names of each category (tools without one under
        ``"uncategorized"``), categories sorted, tools in registration order."""
        with self._lock:
            return {
                c: [n for n in self._records if n in names]
                for c, names in sorted(self._by_category.items())
            }

    def by_action(self) -> dict[str, list[str]]:
        """The tool names declaring each action, actions sorted, tools in registration
        order."""
        with self._lock:
            return {
                a: [n for n in self._records if n in names]
                for a, names in sorted(self._by_action.items())
            }

    def unknown_filters(
        self, categories: Collection[str] = (), actions: Collection[str] = ()
    ) -> tuple[list[str], list[str]]:
        """The given categories and actions that match none (case-insensitively)."""
        with self._lock:
            known_c, known_a = _fold(self._by_category), _fold(self._by_action)
        return (
            [c for c in categories if c.casefold() not in known_c],
            [a for a in actions if a.casefold() not in known_a],
        )

    def _candidates(
        self, categories: Collection[str], actions: Collection[str]
    ) -> npt.NDArray[np.intp]:
        """Slots of the tools passing the filters, in registration order. Call with the
        lock held."""
        if not categories and not actions:
            if self._all_slots is None:
                self._all_slots = np.fromiter(
                    (r.slot for r in self._records.values()), dtype=np.intp
                )
            return self._all_slots
        unknown = self.unknown_filters(categories, actions)
        if unknown[0] or unknown[1]:
            raise SatchelUsageError(
                f"Unknown categories {unknown[0]} or actions {unknown[1]}; the valid ones "
                f"are {sorted(self._by_category)} and {sorted(self._by_action)}.",
                details={"categories": unknown[0], "actions": unknown[1]},
            )
        keep: set[str] | None = None
        if categories:
            folded = _fold(self._by_category)
            keep = set[str]().union(*(self._by_category[folded[c.casefold()]] for c in categories))
        if actions:
            folded = _fold(self._by_action)
            by_action = set[str]().union(*(self._by_action[folded[a.casefold()]] for a in actions))
            keep = by_action if keep is None else keep & by_action
        assert keep is not None
        return np.fromiter((r.slot for n, r in self._records.items() if n in keep), dtype=np.intp)
