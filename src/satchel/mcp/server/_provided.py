"""What a :class:`~satchel.mcp.ResourceProvider` or :class:`~satchel.mcp.PromptProvider`
answers, as MCP results: the ``resources/*`` and ``prompts/*`` requests of
:class:`~satchel.mcp.SatchelServer`, given the request's :class:`~satchel.ToolContext`.

This is the boundary: a provider's failure becomes one JSON-RPC error (its message when
it is a :class:`~satchel.SatchelError`, else a generic one, logged), an unknown resource
or prompt and a missing prompt argument become ``INVALID_PARAMS``.
"""

from __future__ import annotations

import logging

import mcp_types as types
from mcp.shared.exceptions import MCPError

from satchel._errors import NotFoundError, SatchelError
from satchel.mcp.server._prompts import PromptInfo, PromptProvider
from satchel.mcp.server._resources import ResourceProvider, ResourceTemplates
from satchel.tools import ToolContext

__all__ = [
    "get_prompt",
    "list_prompts",
    "list_resource_templates",
    "list_resources",
    "read_resource",
]

logger = logging.getLogger("satchel.mcp.server")


def _failed(message: str, exc: Exception) -> MCPError:
    if isinstance(exc, SatchelError):
        return MCPError(types.INTERNAL_ERROR, f"{message} {exc.message}")
    logger.error("resource provider failed", exc_info=exc)
    return MCPError(types.INTERNAL_ERROR, message)


async def list_resources(provider: ResourceProvider, ctx: ToolContext) -> types.ListResourcesResult:
    """``resources/list``."""
    try:
        found = await provider.list_resources(ctx)
    except Exception as exc:  # the boundary: a provider's failure is one JSON-RPC error
        raise _failed("Listing the resources failed.", exc) from exc
    return types.ListResourcesResult(
        resources=[
            types.Resource(
                uri=r.uri,
                name=r.name,
                description=r.description,
                mime_type=r.mime_type,
                size=r.size,
            )
            for r in found
        ]
    )


async def list_resource_templates(
    provider: ResourceProvider, ctx: ToolContext
) -> types.ListResourceTemplatesResult:
    """``resources/templates/list`` (none when the provider has no templates)."""
    if not isinstance(provider, ResourceTemplates):
        return types.ListResourceTemplatesResult(resource_templates=[])
    try:
        found = await provider.list_resource_templates(ctx)
    except Exception as exc:  # the boundary: a provider's failure is one JSON-RPC error
        raise _failed("Listing the resource templates failed.", exc) from exc
    return types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(
                uri_template=t.uri_template,
                name=t.name,
                description=t.description,
                mime_type=t.mime_type,
            )
            for t in found
        ]
    )


async def read_resource(
    provider: ResourceProvider, uri: str, ctx: ToolContext
) -> types.ReadResourceResult:
    """``resources/read``."""
    try:
        content = await provider.read_resource(uri, ctx)
    except NotFoundError as exc:
        raise MCPError(types.INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri}) from exc
    except Exception as exc:  # the boundary: a provider's failure is one JSON-RPC error
        raise _failed(f"Reading {uri} failed.", exc) from exc
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(
                uri=content.uri, mime_type=content.mime_type, text=content.text
            )
        ]
    )


def _prompt(info: PromptInfo) -> types.Prompt:
    return types.Prompt(
        name=info.name,
        title=info.title,
        description=info.description,
        arguments=[
            types.PromptArgument(name=a.name, description=a.description, required=a.required)
            for a in info.arguments
        ]
        or None,
    )


async def list_prompts(provider: PromptProvider, ctx: ToolContext) -> types.ListPromptsResult:
    """``prompts/list``."""
    try:
        found = await provider.list_prompts(ctx)
    except Exception as exc:  # the boundary: a provider's failure is one JSON-RPC error
        raise _failed("Listing the prompts failed.", exc) from exc
    return types.ListPromptsResult(prompts=[_prompt(p) for p in found])


async def get_prompt(
    provider: PromptProvider, params: types.GetPromptRequestParams, ctx: ToolContext
) -> types.GetPromptResult:
    """``prompts/get``: the prompt rendered, after its name and required arguments are
    checked against the provider's listing."""
    arguments = dict(params.arguments or {})
    try:
        known = {p.name: p for p in await provider.list_prompts(ctx)}
    except Exception as exc:  # the boundary: a provider's failure is one JSON-RPC error
        raise _failed("Listing the prompts failed.", exc) from exc
    info = known.get(params.name)
    if info is None:
        names = ", ".join(sorted(known)) or "none"
        raise MCPError(
            types.INVALID_PARAMS,
            f"Unknown prompt {params.name!r}; the prompts are: {names}.",
            {"name": params.name, "prompts": sorted(known)},
        )
    missing = [a.name for a in info.arguments if a.required and a.name not in arguments]
    if missing:
        raise MCPError(
            types.INVALID_PARAMS,
            f"The prompt {params.name!r} needs the argument(s) {', '.join(missing)}.",
            {"name": params.name, "missing": missing},
        )
    try:
        content = await provider.get_prompt(params.name, arguments, ctx)
    except Exception as exc:  # the boundary: a provider's failure is one JSON-RPC error
        raise _failed(f"Rendering the prompt {params.name!r} failed.", exc) from exc
    return types.GetPromptResult(
        description=content.description,
        messages=[
            types.PromptMessage(role=m.role, content=types.TextContent(text=m.text))
            for m in content.messages
        ],
    )
