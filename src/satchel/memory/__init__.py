"""satchel's memory: blocks, archival entries, messages, hybrid search and permissions.

* **Records** (:class:`Block`, :class:`Message`, :class:`SearchFilters`,
  :class:`SearchHit`) are frozen Pydantic models shared by every backend. An archival
  entry *is* a block of kind ``archival``: ``archive``, ``load`` and ``swap`` only
  change a block's kind, and ``recall`` reads, appends to and deletes archival blocks
  by label. Labels are unique per owner agent.
* **:class:`MemoryStore`** is the async protocol every store implements; every call
  names the acting agent. There is one implementation, :class:`GatedStore`, which
  wraps a :class:`MemoryBackend` (the database steps only) and owns everything else,
  the permission gate and consent among it, so no backend can skip them. A shared
  block is addressed by its bare label (the recipient's own block of that label wins)
  or as ``owner/label`` (always works; needed when two owners shared the same label,
  which the error then lists).
* **Permissions**: every write to a block passes one gate, :func:`authorize`, which
  applies the table of :mod:`satchel.memory._permissions` at the agent's effective
  level (the block's own permission for the owner, the share's for a recipient) and
  asks the :class:`ConsentHandler`, if any, when the table says "consent". The write
  transaction then re-checks that level, so a permission lowered meanwhile is enforced.
* **The operator's writes**: :meth:`GatedStore.operator_edit` and
  :meth:`GatedStore.operator_delete` are a person's edit (text, settings and kind
  together) and delete, in one transaction at an expected version, past the gate; the
  memory console writes through them, and no tool reaches them
  (:mod:`satchel.memory._operator`).
* **:class:`SQLiteStore`** is a gated store on the embedded backend: one file, WAL,
  named migrations, FTS5 BM25 with Porter stemming, float32 vectors in the file and an
  HNSW vector index (:class:`satchel.retrieval.AnnIndex`) saved beside it and kept in
  step through crashes (:mod:`satchel.memory.sqlite._indexes`), one writer connection
  under a lock plus a pool of readers, all SQLite calls in worker threads.
* **Search** turns any text into plain terms (:func:`satchel.retrieval.query_terms`),
  takes BM25 and vector candidates within the agent's scope and filters, and fuses them
  by how sure each is: the share of the query's IDF mass an entry contains, plus its
  cosine (:mod:`satchel.retrieval._hybrid` says why; ``bench/README.md`` has the
  figures). :class:`Fusion` is :class:`satchel.retrieval.HybridFusion` under the name
  memory has always exported.
  A query term only an entry's neighbour holds (the turn before or after it)
  counts too, scaled by how close the neighbour is in meaning
  (:class:`Neighbours`, :mod:`satchel.memory._context_window`).
  Domain ``all`` also ranks core and working blocks (a hit is the block's best
  line), tool traffic is left out unless asked for, an agent's turn in progress can be
  (:class:`TurnInProgress`), and :func:`is_relevant` tells evidence from the least
  unrelated entry.
* **Opening**: :func:`open_store` opens the store a path or URL names (a SQLite file,
  ``sqlite:///``, ``postgresql://``), the one place that picks a backend by URL.
* **Agents** start with blocks: :meth:`MemoryStore.ensure_agent` creates a template's
  blocks the first time an agent is used (Letta's ``persona`` and ``human`` by
  :func:`default_template`, or a :class:`AgentTemplate` from :func:`load_template`).
* **Projects**: :func:`project_for_root` names the memory of the project a client has
  open (by its git remote, else its path), and :func:`ensure_project` sets it up and
  shares the person's global blocks (``human``, ``persona``) into it.

Example:
    >>> from satchel.memory import BlockKind, SQLiteStore
    >>> async with SQLiteStore("memory.db") as store:  # doctest: +SKIP
    ...     await store.create_block("ada", "persona", "I am Ada.")
    ...     await store.create_block("ada", "trip", "Kyoto in April", kind=BlockKind.ARCHIVAL)
    ...     hits = await store.search("ada", "travel plans in Japan")
"""

from satchel.memory._backend import MemoryBackend
from satchel.memory._context_window import NO_NEIGHBOURS, Neighbours
from satchel.memory._export_format import EXPORT_FORMAT, export_lines, read_export
from satchel.memory._gated import GatedStore
from satchel.memory._history import HISTORY_VERSIONS, BlockVersion
from satchel.memory._markdown import MarkdownReport, export_markdown, import_markdown
from satchel.memory._merge import JoinedBlock, MergeReport
from satchel.memory._mirror import MarkdownMirror
from satchel.memory._models import (
    AgentSummary,
    Block,
    BlockKind,
    Domain,
    ImportReport,
    Message,
    OnConflict,
    Permission,
    Role,
    SearchFilters,
    SearchHit,
    SearchMode,
    TurnInProgress,
    Unset,
    check_restorable,
    validate_agent,
)
from satchel.memory._open import is_postgres_url, open_store, store_location
from satchel.memory._operator import BlockChange
from satchel.memory._paging import MAX_PAGE_LIMIT, BlockPage
from satchel.memory._permissions import (
    ConsentHandler,
    ConsentRequest,
    Operation,
    RequestOrigin,
    Verdict,
    authorize,
    effective_permission,
    verdict,
)
from satchel.memory._projects import (
    DEFAULT_GLOBAL_LABELS,
    GLOBAL_TAG,
    PROJECT_LABEL,
    Project,
    ensure_project,
    project_for_root,
    project_of,
)
from satchel.memory._protocol import MemoryStore, ProgressCallback
from satchel.memory._scoped import AgentMemory
from satchel.memory._search import SearchResults, is_relevant
from satchel.memory._template import (
    AgentTemplate,
    BlockTemplate,
    default_template,
    empty_template,
    load_template,
)
from satchel.memory.sqlite import SQLiteStore, default_path
from satchel.retrieval import HybridFusion as Fusion

__all__ = [
    "DEFAULT_GLOBAL_LABELS",
    "EXPORT_FORMAT",
    "GLOBAL_TAG",
    "HISTORY_VERSIONS",
    "MAX_PAGE_LIMIT",
    "NO_NEIGHBOURS",
    "PROJECT_LABEL",
    "AgentMemory",
    "AgentSummary",
    "AgentTemplate",
    "Block",
    "BlockChange",
    "BlockKind",
    "BlockPage",
    "BlockTemplate",
    "BlockVersion",
    "ConsentHandler",
    "ConsentRequest",
    "Domain",
    "Fusion",
    "GatedStore",
    "ImportReport",
    "JoinedBlock",
    "MarkdownMirror",
    "MarkdownReport",
    "MemoryBackend",
    "MemoryStore",
    "MergeReport",
    "Message",
    "Neighbours",
    "OnConflict",
    "Operation",
    "Permission",
    "ProgressCallback",
    "Project",
    "RequestOrigin",
    "Role",
    "SQLiteStore",
    "SearchFilters",
    "SearchHit",
    "SearchMode",
    "SearchResults",
    "TurnInProgress",
    "Unset",
    "Verdict",
    "authorize",
    "check_restorable",
    "default_path",
    "default_template",
    "effective_permission",
    "empty_template",
    "ensure_project",
    "export_lines",
    "export_markdown",
    "import_markdown",
    "is_postgres_url",
    "is_relevant",
    "load_template",
    "open_store",
    "project_for_root",
    "project_of",
    "read_export",
    "store_location",
    "validate_agent",
    "verdict",
]
