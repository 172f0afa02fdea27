"""MCP resources: the hook through which a server exposes readable things (memory
blocks, later) next to its tools.

A provider lists and reads text resources for the acting agent; the server maps them to
``resources/list`` and ``resources/read``. When something changes, tell the server with
:meth:`SatchelServer.notify_resources_changed <satchel.mcp.SatchelServer.notify_resources_changed>`
and subscribed clients hear of it.

Two optional abilities, each its own small protocol so a plain provider stays plain:

* :class:`ResourceTemplates`: URI templates for ``resources/templates/list`` (without
  it the list is empty);
* :class:`ResourceVersions`: a version tag per URI, which the server compares while a
  client is subscribed, so ``notifications/resources/updated`` reaches subscribers for
  changes the server did not make itself (another process writing the same database).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from satchel.tools import ToolContext

__all__ = [
    "ResourceContent",
    "ResourceInfo",
    "ResourceProvider",
    "ResourceTemplateInfo",
    "ResourceTemplates",
    "ResourceVersions",
]


class ResourceInfo(BaseModel):
    """One resource as listed to the client."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    uri: str = Field(description="The resource's URI, e.g. 'memory://default/blocks/persona'.")
    name: str = Field(description="A short name for display.")
    description: str | None = None
    mime_type: str = "text/plain"
    size: int | None = Field(default=None, description="The size in bytes, when known.")


class ResourceContent(BaseModel):
    """The text of one resource, as read by the client."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    uri: str
    text: str
    mime_type: str = "text/plain"


@runtime_checkable
class ResourceProvider(Protocol):
    """Lists and reads resources for the agent of a request.

    Raise :class:`~satchel.NotFoundError` from :meth:`read_resource` for an unknown
    URI; the client then gets a JSON-RPC "resource not found" error.
    """

    async def list_resources(self, ctx: ToolContext) -> Sequence[ResourceInfo]:
        """Every resource the agent in ``ctx`` can read."""
        ...

    async def read_resource(self, uri: str, ctx: ToolContext) -> ResourceContent:
        """The current text of the resource at ``uri``."""
        ...


class ResourceTemplateInfo(BaseModel):
    """One URI template (RFC 6570) as listed to the client by ``resources/templates/list``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    uri_template: str = Field(description="The template, e.g. 'memory://{agent}/{label}'.")
    name: str = Field(description="A short name for display.")
    description: str | None = None
    mime_type: str = "text/plain"


@runtime_checkable
class ResourceTemplates(Protocol):
    """A :class:`ResourceProvider` that also offers URI templates."""

    async def list_resource_templates(self, ctx: ToolContext) -> Sequence[ResourceTemplateInfo]:
        """The URI templates of the resources the agent in ``ctx`` can read."""
        ...


@runtime_checkable
class ResourceVersions(Protocol):
    """A :class:`ResourceProvider` that can tell cheaply which resources changed."""

    async def resource_versions(self, ctx: ToolContext) -> Mapping[str, str]:
        """A tag for each URI the agent in ``ctx`` can read, which changes whenever the
        resource's text does (a version number, a digest). A URI missing from the map
        does not exist (now)."""
        ...
