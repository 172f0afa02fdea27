"""Remote tools: how a mounted MCP server's tools look in a local registry.

:class:`RemoteTool` keeps the remote tool's schemas and annotations, validates
arguments against the remote input schema and forwards the call to its
:class:`~satchel.mcp.MountedServer`; :func:`remote_result` turns the remote answer
(structured content, text blocks, or a satchel error carried in ``_meta``) back into a
:class:`~satchel.ToolResult`.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast, get_args

import mcp_types as types

from satchel._errors import ErrorKind, SatchelUsageError
from satchel.mcp._wire import ERROR_META_KEY, NOTICE_META_KEY, VERSION_META_KEY
from satchel.schema import EXAMPLES_META_KEY
from satchel.tools import (
    VERSION_PATTERN,
    ErrorInfo,
    RawTool,
    ToolContext,
    ToolResult,
    check_examples,
)

if TYPE_CHECKING:
    from satchel.mcp.mount._mount import MountedServer

logger = logging.getLogger("satchel.mcp.mount")

__all__ = ["RemoteTool", "local_tool_name", "remote_result"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64
_ERROR_KINDS: frozenset[str] = frozenset(get_args(ErrorKind))


def local_tool_name(prefix: str, remote: str, taken: Collection[str] = ()) -> str:
    """The registry name of the remote tool ``remote``: ``{prefix}_{remote}`` with every
    character outside ``[A-Za-z0-9_-]`` made ``_``, cut to 64 characters (with a short
    hash of ``remote`` to keep it unique), and numbered (``_2``, ``_3``) if ``taken``.

    Example:
        >>> local_tool_name("fs", "read.file")
        'fs_read_file'
    """
    base = _UNSAFE.sub("_", f"{prefix}_{remote}")
    if len(base) > _MAX_NAME:
        digest = hashlib.sha1(remote.encode()).hexdigest()[:8]
        base = base[: _MAX_NAME - 9] + "_" + digest
    name, n = base, 2
    while name in taken:
        suffix = f"_{n}"
        name = base[: _MAX_NAME - len(suffix)] + suffix
        n += 1
    return name


def _object_schema(schema: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return schema if schema is not None and schema.get("type") == "object" else None


def _not_called(args: dict[str, Any]) -> str:
    raise AssertionError("RemoteTool forwards calls itself")


def _examples(remote: types.Tool) -> tuple[str, ...]:
    """The example requests a tool's ``_meta`` carries (as a satchel server sends
    them); none when they are missing or not a list of short strings."""
    raw: Any = (remote.meta or {}).get(EXAMPLES_META_KEY)
    if not isinstance(raw, list):
        return ()
    try:
        return check_examples(raw, tool=remote.name)
    except SatchelUsageError as exc:
        logger.warning("ignoring the examples of the remote tool %r: %s", remote.name, exc)
        return ()


class RemoteTool(RawTool):
    """A tool of a mounted MCP server, registered under a local name.

    Arguments are validated against the remote input schema (as for a raw tool) before
    the call is forwarded; the remote result becomes a :class:`~satchel.ToolResult`.

    Attributes:
        remote_name: The tool's name on the remote server.
        mount: The :class:`MountedServer` that forwards its calls.
    """

    def __init__(self, mount: MountedServer, remote: types.Tool, name: str) -> None:
        hints = remote.annotations or types.ToolAnnotations()
        description = (remote.description or "").strip() or (
            f"The tool {remote.name!r} of the MCP server mounted as {mount.prefix!r}."
        )
        super().__init__(
            name=name,
            description=description,
            parameters=remote.input_schema,
            run=_not_called,
            category=mount.prefix,
            read_only=hints.read_only_hint,
            destructive=hints.destructive_hint,
            idempotent=hints.idempotent_hint,
            open_world=hints.open_world_hint,
            output_schema=_object_schema(remote.output_schema),
            version=_remote_version(remote),
            examples=_examples(remote),
        )
        self.remote_name = remote.name
        self.mount = mount
        self.definition = remote.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def call(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate ``args`` against the remote schema, then forward the call."""
        coerced: list[str] = []
        errors = self._errors(args)
        if errors:
            fixed = self._coerce(args, errors)
            if fixed is None or self._errors(fixed[0]):
                return self._invalid(errors)
            args, coerced = fixed
        result = await self.mount.call_remote(self.remote_name, args, tool=self.spec.name)
        if coerced and result.ok:
            result.coerced = tuple(coerced)
        return result


def _remote_version(remote: types.Tool) -> str | None:
    """The version a satchel server lists the tool under (``_meta``), if valid."""
    meta: Mapping[str, Any] = remote.meta or {}
    version: Any = meta.get(VERSION_META_KEY)
    return version if isinstance(version, str) and VERSION_PATTERN.fullmatch(version) else None


def _content_text(content: Sequence[types.ContentBlock]) -> str:
    parts: list[str] = []
    for block in content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            parts.append(f"[{block.type}: {block.mime_type}, {len(block.data)} base64 characters]")
        elif isinstance(block, types.EmbeddedResource):
            inner = block.resource
            if isinstance(inner, types.TextResourceContents):
                parts.append(inner.text)
            else:
                parts.append(f"[resource: {inner.uri}]")
        else:
            parts.append(f"[resource link: {block.uri}]")
    return "\n".join(parts)


def remote_result(tool: str, result: types.CallToolResult) -> ToolResult:
    """The remote answer as a :class:`~satchel.ToolResult`, its notice kept."""
    out = _remote_result(tool, result)
    notice: Any = (result.meta or {}).get(NOTICE_META_KEY)
    if isinstance(notice, str) and notice:
        out.notice = notice
    return out


def _remote_result(tool: str, result: types.CallToolResult) -> ToolResult:
    text = _content_text(result.content)
    if result.is_error:
        meta: Mapping[str, Any] = result.meta or {}
        raw: Any = meta.get(ERROR_META_KEY)
        if isinstance(raw, dict):
            info = cast(dict[str, Any], raw)
            kind = str(info.get("kind"))
            details: Any = info.get("details")
            if kind in _ERROR_KINDS and isinstance(info.get("message"), str):
                return ToolResult(
                    tool,
                    error=ErrorInfo(
                        cast(ErrorKind, kind),
                        str(info["message"]),
                        cast(dict[str, Any], details) if isinstance(details, dict) else {},
                    ),
                )
        return ToolResult(tool, error=ErrorInfo("failed", text or "The remote tool failed."))
    structured: Any = result.structured_content
    if isinstance(structured, dict):
        return ToolResult(tool, cast(dict[str, Any], structured))
    return ToolResult(tool, text)
