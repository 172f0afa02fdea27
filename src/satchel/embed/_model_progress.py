"""Progress while the first memory call loads the embedding model.

The bundled embedder loads its model on first use, and the very first use on a machine
also builds the int8 copy of the model (about 3 seconds). A memory call that happens to
be first would sit silent meanwhile. :func:`with_model_progress` wraps a tool so that a
call whose caller asked for progress (:attr:`ToolContext.progress
<satchel.ToolContext.progress>`, set over MCP when the client sent a ``progressToken``)
loads the model first and forwards the embedder's long steps as progress reports. A
call without a progress hook runs exactly as before, and loads the model when it first
embeds.

Nothing here knows MCP: the embedder reports steps through a plain callback
(:class:`~satchel.embed.LazyEmbedder`), and the call's context decides where they go.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio.from_thread
import anyio.to_thread

from satchel._errors import SatchelError
from satchel.embed._protocol import LazyEmbedder
from satchel.registry import WrapperTool
from satchel.tools import BaseTool, ToolContext, ToolResult

__all__ = ["load_model_with_progress", "with_model_progress"]

logger = logging.getLogger("satchel.builtin")

_READY = "the embedding model is ready"


async def load_model_with_progress(embedder: LazyEmbedder, ctx: ToolContext) -> None:
    """Load ``embedder``'s model in a worker thread, reporting each long step to
    ``ctx`` as progress ``0`` of ``1`` and the end as ``1`` of ``1`` (nothing at all when
    no step took long).

    A model that cannot be loaded is logged, not raised: the call goes on and meets the
    same error where it embeds, reported as that call's error.
    """
    reported = False

    def step(message: str) -> None:  # in the worker thread
        nonlocal reported
        reported = True
        try:
            anyio.from_thread.run(ctx.report_progress, 0, 1, message)
        except Exception:  # the boundary: a lost progress report must not stop the load
            logger.debug("a progress report was not delivered", exc_info=True)

    try:
        await anyio.to_thread.run_sync(embedder.load, step)
    except SatchelError as exc:
        logger.warning("loading the embedding model failed: %s", exc.message)
        return
    if reported:
        await ctx.report_progress(1, 1, _READY)


class _LoadsModelFirst(WrapperTool):
    def __init__(self, inner: BaseTool, embedder: LazyEmbedder) -> None:
        super().__init__(inner)
        self._embedder = embedder

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if ctx.progress is not None and not self._embedder.loaded:
            await load_model_with_progress(self._embedder, ctx)
        return await self.inner.call(args, ctx)


def with_model_progress(tool: BaseTool, embedder: LazyEmbedder) -> BaseTool:
    """``tool``, loading ``embedder``'s model with progress reports before a call whose
    context has a progress hook while the model is not loaded yet (see the module
    docstring). :func:`~satchel.builtin.memory_toolset` applies it to the memory tools.

    Example:
        >>> registry.register(with_model_progress(my_tool, default_embedder()))
    """
    return _LoadsModelFirst(tool, embedder)
