"""satchel's memory: blocks, archival entries, messages, hybrid search and permissions.

Records (:class:`Block`, :class:`Message`, :class:`SearchHit`, ...) are plain frozen
models shared by every backend. :class:`MemoryStore` is the async protocol a backend
implements; :class:`SQLiteStore` is the embedded one. Every write to a block passes one
permission gate (:func:`authorize`), which may ask a :class:`ConsentHandler`.
"""

from satchel.memory._fusion import Fusion
from satchel.memory._models import (
    Block,
    BlockKind,
    Domain,
    Message,
    Permission,
    Role,
    SearchFilters,
    SearchHit,
    SearchMode,
)
from satchel.memory._permissions import (
    ConsentHandler,
    ConsentRequest,
    Operation,
    Verdict,
    authorize,
    effective_permission,
    verdict,
)
from satchel.memory._protocol import MemoryStore, ProgressCallback
from satchel.memory.sqlite import SQLiteStore, default_path

__all__ = [
    "Block",
    "BlockKind",
    "ConsentHandler",
    "ConsentRequest",
    "Domain",
    "Fusion",
    "MemoryStore",
    "Message",
    "Operation",
    "Permission",
    "ProgressCallback",
    "Role",
    "SQLiteStore",
    "SearchFilters",
    "SearchHit",
    "SearchMode",
    "Verdict",
    "authorize",
    "default_path",
    "effective_permission",
    "verdict",
]
