"""How a source index lives in a memory store: under a companion agent of the agent
it belongs to, so it uses the store's own hybrid search, embeddings, backends and
backups, and never mixes with what the agent wrote itself.

- ``roots``: a core block, the JSON list of the folders and files added.
- ``file:<digest>``: a working block per indexed file, its :class:`FileRecord`.
- ``<digest>:<n>``: an archival block per passage, its file and lines in metadata.
"""

from __future__ import annotations

import hashlib
from typing import Final

from pydantic import BaseModel, ConfigDict

__all__ = [
    "ROOTS_LABEL",
    "SOURCE_TAG",
    "FileRecord",
    "chunk_label",
    "file_digest",
    "file_label",
    "sources_agent",
]

ROOTS_LABEL: Final = "roots"
SOURCE_TAG: Final = "source"
_PREFIX: Final = "~sources:"


def sources_agent(agent: str) -> str:
    """The companion agent that holds ``agent``'s sources."""
    name = f"{_PREFIX}{agent}"
    if len(name) <= 128:
        return name
    return f"{_PREFIX}#{hashlib.sha256(agent.encode('utf-8', 'surrogatepass')).hexdigest()[:32]}"


def file_digest(name: str) -> str:
    """A short stable id for a file's name (labels cannot hold ``/``)."""
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def file_label(name: str) -> str:
    """The label of a file's record block."""
    return f"file:{file_digest(name)}"


def chunk_label(name: str, index: int) -> str:
    """The label of a file's ``index``-th passage."""
    return f"{file_digest(name)}:{index}"


class FileRecord(BaseModel):
    """What the index knows of one file.

    Attributes:
        name: How hits name it (``notes/todo.md``).
        path: Its absolute path on this machine.
        root: The source (folder or file) it came from.
        sha256: Its content's hash when indexed.
        size: Its size in bytes.
        mtime_ns: Its modification time when indexed.
        chunks: How many passages it was cut into.
        lines: How many lines its text has.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str
    path: str
    root: str
    sha256: str
    size: int
    mtime_ns: int
    chunks: int
    lines: int
