"""Meta-tools: lazy loading for large tool catalogs.

:class:`MetaTools` puts three tools in front of a registry of any size:
``discover_tools`` (hybrid BM25 + embedding search, filters by category and action),
``get_tool_schema`` (one tool's full definition, on demand) and ``invoke_tool``
(validated calls; destructive ones only with a human's approval through a
:class:`~satchel.consent.PermissionBroker`). :class:`CatalogIndex` is the search index
underneath, kept current as the registry changes; :class:`Ranking` says how a query
ranks tools.

Example:
    >>> meta = MetaTools(registry)
    >>> await meta.registry.call("discover_tools", {"query": "delete a branch"})
    >>> meta.registry.schemas("openai")   # three short definitions, not hundreds
"""

from satchel.meta._catalog import (
    CatalogEntry,
    CatalogIndex,
    CatalogScores,
    SearchMode,
)
from satchel.meta._meta import Discovery, MetaTools
from satchel.meta._ranking import Ranking, fuse_scores
from satchel.meta._tools import DiscoverTools, GetToolSchema, InvokeTool

__all__ = [
    "CatalogEntry",
    "CatalogIndex",
    "CatalogScores",
    "DiscoverTools",
    "Discovery",
    "GetToolSchema",
    "InvokeTool",
    "MetaTools",
    "Ranking",
    "SearchMode",
    "fuse_scores",
]
