"""The source index: folders and files an agent searches beside its memory, kept in the
same store under a companion agent (public as :mod:`satchel.sources`)."""

from satchel.memory.sources._files import MAX_FILE_BYTES, Skipped, SourceFile
from satchel.memory.sources._index import (
    FileWindow,
    GrepHit,
    GrepResult,
    IndexReport,
    SourceHit,
    SourceIndex,
)
from satchel.memory.sources._records import FileRecord, sources_agent

__all__ = [
    "MAX_FILE_BYTES",
    "FileRecord",
    "FileWindow",
    "GrepHit",
    "GrepResult",
    "IndexReport",
    "Skipped",
    "SourceFile",
    "SourceHit",
    "SourceIndex",
    "sources_agent",
]
