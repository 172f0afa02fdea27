"""Sources: folders and files an agent can search, open and grep next to its memory.

``satchel sources add PATH --agent NAME`` (or :meth:`SourceIndex.add`) cuts every
readable file (text, Markdown, code, PDF) into passages and indexes them with the
memory store's own hybrid search, under a companion of the agent, never inside the
agent's memory. :func:`source_tools` gives a model ``open_file``, ``grep_files`` and
``search_files``; :func:`watch_sources` keeps the index current while ``serve`` runs.

Example:
    >>> index = SourceIndex(store, "ada")
    >>> await index.add("~/notes")
    >>> hit = (await index.search("when is the dentist"))[0]
    >>> hit.file, hit.start, hit.end
    ('notes/health.md', 12, 30)
"""

from satchel.memory.sources import (
    MAX_FILE_BYTES,
    FileRecord,
    FileWindow,
    GrepHit,
    GrepResult,
    IndexReport,
    Skipped,
    SourceFile,
    SourceHit,
    SourceIndex,
    sources_agent,
)
from satchel.sources._tools import (
    FileLines,
    FoundLine,
    FoundLines,
    FoundPassage,
    FoundPassages,
    source_tools,
)
from satchel.sources._watch import watch_sources

__all__ = [
    "MAX_FILE_BYTES",
    "FileLines",
    "FileRecord",
    "FileWindow",
    "FoundLine",
    "FoundLines",
    "FoundPassage",
    "FoundPassages",
    "GrepHit",
    "GrepResult",
    "IndexReport",
    "Skipped",
    "SourceFile",
    "SourceHit",
    "SourceIndex",
    "source_tools",
    "sources_agent",
    "watch_sources",
]
