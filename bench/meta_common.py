"""Shared helpers of the meta-tool benchmarks: finding the data, loading catalogs as raw
tools (with visible name sanitising), and an embedder that embeds each text once."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from satchel import SchemaError, ToolRegistry
from satchel.embed import Embedder, default_embedder

_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def data_dir() -> Path:
    """``shared/data`` beside the checkout (walking up from this file)."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    sys.exit("shared/data not found beside the checkout; nothing to measure")


def sanitise(name: str, taken: set[str]) -> str:
    """A valid, unused tool name for ``name``: invalid characters become ``_``, the
    result is cut to 64 characters, and a clash gets ``_2``, ``_3``, ..."""
    base = _INVALID.sub("_", name)[:64] or "tool"
    candidate, n = base, 2
    while candidate in taken:
        suffix = f"_{n}"
        candidate, n = base[: 64 - len(suffix)] + suffix, n + 1
    taken.add(candidate)
    return candidate


def _noop(args: dict[str, Any]) -> str:
    return "ok"


def load_catalog(
    registry: ToolRegistry, path: Path, *, prefix_server: bool = False
) -> dict[str, Any]:
    """Register every tool of an MCP catalog file as a raw tool.

    Returns a report: ``renamed`` (``(original, registered name)`` pairs), ``refused``
    (tools whose schema satchel refuses, with the reason), and ``tools`` (the raw dicts
    registered, under their registered names).
    """
    tools: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    taken: set[str] = set(registry.names())
    renamed: list[tuple[str, str]] = []
    refused: dict[str, str] = {}
    registered: dict[str, dict[str, Any]] = {}
    for tool in tools:
        original = str(tool["name"])
        if prefix_server and tool.get("server"):
            original = f"{tool['server']}_{original}"
        name = sanitise(original, taken)
        if name != original:
            renamed.append((original, name))
        hints = tool.get("annotations") or {}
        try:
            registry.register_raw(
                name=name,
                description=tool.get("description") or original,
                parameters=tool.get("inputSchema") or {"type": "object", "properties": {}},
                run=_noop,
                category=tool.get("category"),
                read_only=hints.get("readOnlyHint"),
                destructive=hints.get("destructiveHint"),
            )
        except SchemaError as exc:
            taken.discard(name)
            refused[original] = exc.message[:120]
            continue
        registered[name] = tool
    return {"renamed": renamed, "refused": refused, "tools": registered}


def load_metatool(registry: ToolRegistry, folder: Path) -> dict[str, str]:
    """Register the MetaTool tools (``{name: description}``); returns original → name."""
    tools: dict[str, str] = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
    taken: set[str] = set()
    names: dict[str, str] = {}
    for original, description in tools.items():
        name = sanitise(original, taken)
        names[original] = name
        registry.register_raw(
            name=name,
            description=description or original,
            parameters={"type": "object", "properties": {}},
            run=_noop,
        )
    return names


class CachingEmbedder:
    """Wraps an embedder so each distinct text is embedded once per run; :meth:`warm`
    embeds many texts in one batched call."""

    def __init__(self, inner: Embedder | None = None) -> None:
        self.inner = inner or default_embedder()
        self.name = self.inner.name
        self.dim = self.inner.dim
        self.cache: dict[str, npt.NDArray[np.float32]] = {}

    def warm(self, texts: Sequence[str]) -> None:
        """Embed every text not cached yet, batched."""
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            for text, row in zip(missing, self.inner.embed(missing), strict=True):
                self.cache[text] = row

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The vectors of ``texts``, from the cache where possible."""
        self.warm(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.cache[t] for t in texts])
