"""A registry seen through a compatibility profile: every tool's results in the seed's
shapes (:func:`with_compat`)."""

from __future__ import annotations

from typing import Any

from satchel.compat._agenticpal import agenticpal_result
from satchel.compat._pattern import pattern_result
from satchel.compat._profile import CompatProfile, check_profile
from satchel.registry import BaseRegistry, RegistryView, WrapperTool
from satchel.tools import BaseTool, ToolContext, ToolResult, ToolSpec

__all__ = ["META_TOOL_NAMES", "compat_spec", "with_compat"]

META_TOOL_NAMES = frozenset({"discover_tools", "get_tool_schema", "invoke_tool"})
"""The meta-tools, which answer in a profile's shapes themselves
(:class:`~satchel.meta.MetaTools` with ``compat``): the view leaves them as they are."""


_PATTERN_SENT: dict[str, Any] = {
    "type": "object",
    "properties": {"success": {"type": "boolean"}, "message": {"type": "string"}},
    "required": ["success", "message"],
}
"""The output schema of Pattern's ``send_message``."""


class _Compat(WrapperTool):
    """A tool answering in a profile's shapes, its output schema saying so (MCP clients
    check structured results against it): none for AgenticPal's envelope, Pattern's
    for ``send_message``."""

    def __init__(self, inner: BaseTool, profile: CompatProfile) -> None:
        super().__init__(inner)
        self.profile: CompatProfile = profile
        self._spec = compat_spec(inner.spec, profile)

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result = await self.inner.call(args, ctx)
        if self.profile == "agenticpal":
            return agenticpal_result(result)
        return pattern_result(result, self.inner.spec.name)


def compat_spec(spec: ToolSpec, profile: CompatProfile) -> ToolSpec:
    """``spec`` with the output schema of ``profile``'s results (MCP clients check a
    structured result against it): none for AgenticPal's envelope, Pattern's
    ``{success, message}`` for ``send_message``; otherwise ``spec`` itself."""
    if profile == "agenticpal":
        return spec.model_copy(update={"output_schema": None, "output_wrapped": False})
    if spec.name == "send_message":
        return spec.model_copy(update={"output_schema": _PATTERN_SENT, "output_wrapped": False})
    return spec


def _wrap(tool: BaseTool, profile: CompatProfile) -> BaseTool:
    spec = tool.spec
    if spec.category == "meta" and spec.name in META_TOOL_NAMES:
        return tool
    return _Compat(tool, profile)


def with_compat(registry: BaseRegistry, profile: CompatProfile | str) -> RegistryView:
    """A live view of ``registry`` whose tools answer in ``profile``'s shapes:

    * ``agenticpal``: ``{success: true, message, data}``; errors as ``{success: false,
      message, error}`` (still errors: ``ok`` is false, MCP's ``isError`` is set); a
      call held for approval as ``pending_confirmation`` with ``tool_name`` and
      ``parameters`` (and the ``approval_id`` to retry with);
    * ``pattern``: ``send_message`` answers ``{success: true, message}``.

    Schemas and arguments are the tools' own (each seed's argument forms are accepted
    without a profile; see docs/compat.md).

    Raises:
        SatchelUsageError: ``profile`` is no profile.

    Example:
        >>> served = with_compat(memory_toolset(store), "pattern")
        >>> (await served.call("send_message", {"message": "Hi"}, ctx)).output
        {'success': True, 'message': 'Sent to user. Your turn is over.'}
    """
    chosen = check_profile(profile)
    assert chosen is not None
    return RegistryView([registry], lambda tool: _wrap(tool, chosen))
