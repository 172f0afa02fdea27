"""Meta-tools: lazy loading for large tool catalogs.

:class:`MetaTools` puts three tools in front of a registry of any size:
``discover_tools`` (hybrid BM25 + embedding search, filters by category and action),
``get_tool_schema`` (one tool's full definition, on demand) and ``invoke_tool``
(validated calls; destructive ones only with a human's approval through a
:class:`~satchel.consent.PermissionBroker`). :class:`CatalogIndex` is the search index
underneath, kept current as the registry changes; :class:`Ranking` says how a query
ranks tools. Tools may carry example requests, and the meta-tools learn more from use:
a ``discover_tools`` query followed by a successful call is kept in a
:class:`UsageStore` (:class:`MemoryUsageStore`, or :class:`SQLiteUsageStore` or
:class:`PostgresUsageStore` in the memory database) and ranks that tool for similar queries later.

Example:
    >>> meta = MetaTools(registry)
    >>> await meta.registry.call("discover_tools", {"query": "delete a branch"})
    >>> meta.registry.schemas("openai")   # three short definitions, not hundreds
"""

import typing

from satchel.meta._catalog import CatalogIndex, SearchMode
from satchel.meta._entry import CatalogEntry, CatalogScores
from satchel.meta._learning import UsageLearning
from satchel.meta._meta import Discovery, MetaTools
from satchel.meta._ranking import Ranking, fuse_scores
from satchel.meta._tools import DiscoverTools, GetToolSchema, InvokeTool
from satchel.meta._usage import LearnedPair, MemoryUsageStore, UsageStore, catalog_id
from satchel.meta._usage_open import open_usage_store
from satchel.meta._usage_sqlite import SQLiteUsageStore

if typing.TYPE_CHECKING:
    from satchel.meta._usage_postgres import PostgresUsageStore

__all__ = [
    "CatalogEntry",
    "CatalogIndex",
    "CatalogScores",
    "DiscoverTools",
    "Discovery",
    "GetToolSchema",
    "InvokeTool",
    "LearnedPair",
    "MemoryUsageStore",
    "MetaTools",
    "PostgresUsageStore",
    "Ranking",
    "SQLiteUsageStore",
    "SearchMode",
    "UsageLearning",
    "UsageStore",
    "catalog_id",
    "fuse_scores",
    "open_usage_store",
]


def __getattr__(name: str) -> typing.Any:
    # PostgreSQL's driver loads only when its store is asked for: `import satchel`
    # stays free of psycopg.
    if name == "PostgresUsageStore":
        from satchel.meta._usage_postgres import PostgresUsageStore

        return PostgresUsageStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
