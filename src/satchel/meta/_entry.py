"""What the catalog index hands out: a tool's ``discover_tools`` entry, and every
tool's signals for one query."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from satchel.consent import ApprovalPolicy, needs_approval
from satchel.meta._text import fit_entry_summary
from satchel.tools import ToolSpec

__all__ = ["CatalogEntry", "CatalogScores"]


class CatalogEntry(BaseModel):
    """What ``discover_tools`` tells a model about one tool.

    Attributes:
        name: The tool's name.
        summary: Its summary, cut so that the whole row costs under 25 tokens (when
            the name, category and actions alone leave room for it).
        category: Its category, or ``None``.
        actions: The actions it declares (``read``, ``create``, ...).
        is_write: False only when the tool (every operation) is read-only.
        destructive: True when the tool or one of its operations is destructive.
        needs_approval: True when some call of the tool waits for a human's approval
            through ``invoke_tool`` (under the served
            :class:`~satchel.consent.ApprovalPolicy`; never for memory tools). Not a
            row column: ``discover_tools`` names such tools once, beside the rows.
        version: The version found, for a tool registered in several versions (not a
            row column either: ``discover_tools`` lists them beside the rows).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    summary: str
    category: str | None
    actions: tuple[str, ...]
    is_write: bool
    destructive: bool
    needs_approval: bool = False
    version: str | None = None

    @classmethod
    def from_spec(
        cls, spec: ToolSpec, policy: ApprovalPolicy = ApprovalPolicy.DESTRUCTIVE
    ) -> CatalogEntry:
        """The entry of a tool (``policy``: which calls wait for a human)."""
        held = needs_approval(spec, None, policy)
        summary = fit_entry_summary(
            spec.name,
            spec.summary or spec.description,
            [spec.category, ",".join(spec.actions), spec.is_write],
        )
        return cls(
            name=spec.name,
            summary=summary,
            category=spec.category,
            actions=spec.actions,
            is_write=spec.is_write,
            destructive=spec.is_destructive(),
            needs_approval=held,
            version=spec.version,
        )

    def row(self) -> list[Any]:
        """The entry as a ``discover_tools`` row (see :data:`~satchel.meta.ENTRY_COLUMNS`;
        the actions joined by commas, which costs fewer tokens than a list)."""
        return [self.name, self.summary, self.category, ",".join(self.actions), self.is_write]


@dataclass(frozen=True, kw_only=True, slots=True)
class CatalogScores:
    """Every tool's signals for one query (for benchmarks and tuning a
    :class:`Ranking`).

    Attributes:
        names: Tool names, in registration order.
        bm25: BM25 score of each tool.
        description: Cosine similarity of the query to each tool's description, or
            ``None`` without an embedder.
        name: Cosine similarity of the query to each tool's name words, or ``None``.
        example: Each tool's best cosine to one of its example requests (written or
            learned; its description's when it has none), or ``None`` when no tool has
            one (or without an embedder).
    """

    names: list[str]
    bm25: npt.NDArray[np.float32]
    description: npt.NDArray[np.float32] | None
    name: npt.NDArray[np.float32] | None
    example: npt.NDArray[np.float32] | None = None
