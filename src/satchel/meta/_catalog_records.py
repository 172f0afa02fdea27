"""The records of :class:`~satchel.meta.CatalogIndex` and the reads over them: a tool's
:class:`ToolRecord`, its entry, the counts and tool names per category and per action,
and the filters a search starts from.

:class:`CatalogRecords` is a part the index holds: it owns the index's lock, the
records, their slots (a tool's row in the vector arrays and the BM25 index) and the
by-category and by-action indexes (the index is built and kept current in
:mod:`satchel.meta._catalog`).
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
from satchel.meta._synonyms import CATEGORY_SYNONYMS
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
    implied: frozenset[str]
    """The seed actions the tool answers to beyond its own (see
    :func:`~satchel.meta._synonyms.implied_actions`)."""
    texts: tuple[str, str]
    """What the description and the name vectors are computed from."""
    keys: tuple[str, str]


def slot_list(array: npt.NDArray[np.intp]) -> list[int]:
    """``array``'s slots as a list of ints."""
    return cast(list[int], array.tolist())


def _fold(values: Iterable[str]) -> dict[str, str]:
    return {v.casefold(): v for v in values}


class CatalogRecords:
    """The records of :class:`~satchel.meta.CatalogIndex` and the reads over them (see
    the module docstring). ``lock`` guards every part of the index."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.records: dict[str, ToolRecord] = {}
        self.slots: list[str | None] = []
        self._free: list[int] = []
        self._by_category: dict[str, set[str]] = {}
        self._by_action: dict[str, set[str]] = {}
        self._by_implied: dict[str, set[str]] = {}
        self._all_slots: npt.NDArray[np.intp] | None = None

    # -- changes (call with the lock held) --------------------------------------

    def take_slot(self, name: str) -> int:
        """A free slot for ``name`` (a new one past the end when none is free)."""
        if self._free:
            slot = self._free.pop()
            self.slots[slot] = name
        else:
            slot = len(self.slots)
            self.slots.append(name)
        return slot

    def put(self, record: ToolRecord) -> None:
        """Keep ``record`` (its old record, if any, unlinked first) and index it by
        category and action."""
        name = record.spec.name
        self.records[name] = record
        self._by_category.setdefault(record.category, set()).add(name)
        for action in record.actions:
            self._by_action.setdefault(action, set()).add(name)
        for action in record.implied:
            self._by_implied.setdefault(action, set()).add(name)
        self._all_slots = None

    def unlink(self, record: ToolRecord) -> None:
        """Take ``record`` out of the by-category and by-action indexes."""
        names = self._by_category.get(record.category)
        if names is not None:
            names.discard(record.spec.name)
            if not names:
                del self._by_category[record.category]
        for index, actions in (
            (self._by_action, record.actions),
            (self._by_implied, record.implied),
        ):
            for action in actions:
                names = index.get(action)
                if names is not None:
                    names.discard(record.spec.name)
                    if not names:
                        del index[action]

    def drop(self, record: ToolRecord) -> None:
        """Forget ``record`` and free its slot."""
        self.unlink(record)
        del self.records[record.spec.name]
        self.slots[record.slot] = None
        self._free.append(record.slot)
        self._all_slots = None

    def slot_of(self, tool: str) -> int:
        """``tool``'s slot, or -1."""
        record = self.records.get(tool)
        return -1 if record is None else record.slot

    def at(self, slot: int) -> ToolRecord:
        """The record in ``slot``."""
        return self.records[self.slots[slot] or ""]

    # -- reads -------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.records)

    def entry(self, name: str) -> CatalogEntry | None:
        """The entry of the tool called ``name``, or ``None``."""
        record = self.records.get(name)
        return record.entry if record is not None else None

    def entries(self) -> list[CatalogEntry]:
        """Every tool's entry, in registration order."""
        with self.lock:
            return [r.entry for r in self.records.values()]

    def categories(self) -> dict[str, int]:
        """Tool count per category (tools without one under ``"uncategorized"``),
        sorted by name."""
        with self.lock:
            return {c: len(n) for c, n in sorted(self._by_category.items())}

    def actions(self) -> dict[str, int]:
        """Tool count per declared action, sorted by name."""
        with self.lock:
            return {a: len(n) for a, n in sorted(self._by_action.items())}

    def by_category(self) -> dict[str, list[str]]:
        """The tool names of each category (tools without one under
        ``"uncategorized"``), categories sorted, tools in registration order."""
        with self.lock:
            return {
                c: [n for n in self.records if n in names]
                for c, names in sorted(self._by_category.items())
            }

    def by_action(self) -> dict[str, list[str]]:
        """The tool names declaring each action, actions sorted, tools in registration
        order."""
        with self.lock:
            return {
                a: [n for n in self.records if n in names]
                for a, names in sorted(self._by_action.items())
            }

    def unknown_filters(
        self, categories: Collection[str] = (), actions: Collection[str] = ()
    ) -> tuple[list[str], list[str]]:
        """The given categories and actions that match none (case-insensitively; a
        seed's synonym counts, see :mod:`satchel.meta._synonyms`)."""
        with self.lock:
            known_c = set(_fold(self._by_category))
            known_a = set(_fold(self._by_action)) | set(_fold(self._by_implied))
        known_c |= {seed for seed, ours in CATEGORY_SYNONYMS.items() if ours in known_c}
        return (
            [c for c in categories if c.casefold() not in known_c],
            [a for a in actions if a.casefold() not in known_a],
        )

    def _in_category(self, category: str) -> set[str]:
        """The tools of ``category`` (case-insensitively, or the one a seed's synonym
        stands for). Call with the lock held."""
        folded = _fold(self._by_category)
        key = category.casefold()
        if key not in folded:
            key = CATEGORY_SYNONYMS[key]
        return self._by_category[folded[key]]

    def _with_action(self, action: str) -> set[str]:
        """The tools declaring ``action`` or answering to it as a seed's synonym
        (case-insensitively). Call with the lock held."""
        key = action.casefold()
        declared = _fold(self._by_action).get(key)
        implied = _fold(self._by_implied).get(key)
        found = set(self._by_action[declared]) if declared is not None else set[str]()
        if implied is not None:
            found |= self._by_implied[implied]
        return found

    def candidates(
        self, categories: Collection[str], actions: Collection[str]
    ) -> npt.NDArray[np.intp]:
        """Slots of the tools passing the filters, in registration order. Call with the
        lock held."""
        if not categories and not actions:
            if self._all_slots is None:
                self._all_slots = np.fromiter(
                    (r.slot for r in self.records.values()), dtype=np.intp
                )
            return self._all_slots
        unknown = self.unknown_filters(categories, actions)
        if unknown[0] or unknown[1]:
            raise SatchelUsageError(
                f"Unknown categories {unknown[0]} or actions {unknown[1]}; the valid ones "
                f"are {sorted(self._by_category)} and "
                f"{sorted(set(self._by_action) | set(self._by_implied))}.",
                details={"categories": unknown[0], "actions": unknown[1]},
            )
        keep: set[str] | None = None
        if categories:
            keep = set[str]().union(*(self._in_category(c) for c in categories))
        if actions:
            by_action = set[str]().union(*(self._with_action(a) for a in actions))
            keep = by_action if keep is None else keep & by_action
        assert keep is not None
        return np.fromiter((r.slot for n, r in self.records.items() if n in keep), dtype=np.intp)
