"""Tool versions: several versions of one tool side by side in a registry.

A registry keeps, per tool name, every registered version. The bare name calls the
default version (the latest, by :func:`version_key`, unless one is pinned); ``name@1``
calls version ``1``. Providers refuse ``@`` in function names, so when a registry's
schemas list every version (``schemas(..., versions="all")``) an older version is
offered as ``name_v1`` (:func:`version_alias`), which calls resolve too.

A deprecated version still runs; its result carries the deprecation notice
(:attr:`ToolResult.notice <satchel.tools.ToolResult.notice>`), so a model can move on.
"""

from __future__ import annotations

import re
from dataclasses import replace as dc_replace
from typing import Any

from satchel.tools import BaseTool, ToolContext, ToolResult, ToolSpec, check_name

__all__ = ["VersionedTool", "split_version", "version_alias", "version_key"]

_PART = re.compile(r"(\d+)|(\D+)")


def split_version(name: str) -> tuple[str, str | None]:
    """``"search@2"`` -> ``("search", "2")``; a bare name -> ``(name, None)``."""
    base, sep, version = name.partition("@")
    return (base, version) if sep else (name, None)


def version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that orders versions naturally: ``2 < 10``, ``1.9 < 1.10``, and a
    number before a word (``2 < 2-beta`` is not attempted: compare like with like)."""
    return tuple(
        (0, int(num)) if num else (1, word.strip(".-_"))
        for num, word in _PART.findall(version)
        if num or word.strip(".-_")
    )


def version_alias(name: str, version: str) -> str:
    """The provider-safe name under which a non-default version is listed:
    ``version_alias("search", "1.2") == "search_v1_2"``."""
    return f"{name}_v{version.replace('.', '_')}"


def notice_for(spec: ToolSpec) -> str:
    """The notice a deprecated version's results carry."""
    label = f"{spec.name}@{spec.version}" if spec.version else spec.name
    return f"{label} is deprecated: {spec.deprecated}"


class VersionedTool(BaseTool):
    """A tool shown under a version (and deprecation notice) other than its own spec's,
    or a deprecated tool whose results must carry the notice.

    Args:
        inner: The tool.
        version: The version to show (``None`` keeps the spec's).
        deprecated: A deprecation message (``None`` keeps the spec's).
    """

    def __init__(
        self, inner: BaseTool, *, version: str | None = None, deprecated: str | None = None
    ) -> None:
        self.inner = inner
        update: dict[str, Any] = {}
        if version is not None:
            update["version"] = version
        if deprecated is not None:
            update["deprecated"] = deprecated
        spec = inner.spec
        check_name(spec.name)
        self._spec = spec.model_copy(update=update) if update else spec
        self._notice = notice_for(self._spec) if self._spec.deprecated else None

    @property
    def spec(self) -> ToolSpec:
        """The tool's definition with its version and deprecation."""
        return self._spec

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the tool; a deprecated version's result carries the notice."""
        result = await self.inner.call(args, ctx)
        if self._notice is None or (result.notice and self._notice in result.notice):
            return result
        notice = f"{result.notice} {self._notice}" if result.notice else self._notice
        return dc_replace(result, notice=notice)
