"""The file tools a model uses on an agent's sources: ``search_files`` (meaning and
words, with file and lines), ``grep_files`` (a bounded regular expression) and
``open_file`` (a window of lines), in the spirit of Letta's file tools."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from satchel.memory import MemoryStore
from satchel.memory.sources._index import MAX_GREP_HITS, MAX_WINDOW_LINES, SourceIndex
from satchel.tools import BaseTool, ToolContext, tool

__all__ = [
    "FileLines",
    "FoundLine",
    "FoundLines",
    "FoundPassage",
    "FoundPassages",
    "source_tools",
]


class FoundPassage(BaseModel):
    """A passage of a file that matches."""

    file: str = Field(description="The file's name, for open_file.")
    lines: str = Field(description="The lines it spans, as 'start-end'.")
    text: str = Field(description="The passage; quote from it.")
    score: float = Field(description="Relevance; higher is better, within this search only.")


class FoundPassages(BaseModel):
    """The passages ``search_files`` found, best first."""

    message: str
    results: list[FoundPassage] = Field(default_factory=list[FoundPassage])


class FoundLine(BaseModel):
    """A line ``grep_files`` matched."""

    file: str
    line: int
    text: str


class FoundLines(BaseModel):
    """The lines ``grep_files`` matched, file by file."""

    message: str
    matches: list[FoundLine] = Field(default_factory=list[FoundLine])
    truncated: bool = Field(description="True when there were more than the limit.")


class FileLines(BaseModel):
    """A window of a file's lines."""

    file: str
    start: int = Field(description="The first line shown (1-based).")
    end: int = Field(description="The last line shown.")
    total: int = Field(description="How many lines the file has.")
    text: str = Field(description="The lines, each prefixed with its number.")


def source_tools(store: MemoryStore) -> list[BaseTool]:
    """``search_files``, ``grep_files`` and ``open_file`` over the calling agent's
    sources (``ctx.agent``), for a registry or ``satchel serve``.

    Example:
        >>> registry = ToolRegistry([*memory_toolset(store), *source_tools(store)])
    """

    @tool(category="files", actions=["search"], summary="Search the user's files by meaning.")
    async def search_files(
        ctx: ToolContext,
        query: Annotated[str, Field(min_length=1, max_length=10_000)],
        limit: Annotated[int, Field(ge=1, le=50)] = 8,
    ) -> FoundPassages:
        """Search the user's files and folders (notes, docs, code added as sources) by
        meaning and words; each result names its file and lines, for open_file.

        Args:
            query: What to look for, in plain words.
            limit: The most passages to return.
        """
        hits = await SourceIndex(store, ctx.agent).search(query, limit=limit)
        relevant = [h for h in hits if h.relevant]
        if not relevant:
            return FoundPassages(message=f"Nothing in the files matches {query[:80]!r}.")
        return FoundPassages(
            message=f"{len(relevant)} passage{'s' if len(relevant) != 1 else ''}, best first.",
            results=[
                FoundPassage(file=h.file, lines=f"{h.start}-{h.end}", text=h.text, score=h.score)
                for h in relevant
            ],
        )

    @tool(category="files", actions=["search"], summary="Find lines in the user's files by regex.")
    async def grep_files(
        ctx: ToolContext,
        pattern: Annotated[str, Field(min_length=1, max_length=500)],
        files: Annotated[str | None, Field(max_length=500)] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_GREP_HITS)] = 50,
    ) -> FoundLines:
        """Find the lines of the user's files that match a regular expression (case is
        ignored), with file and line number.

        Args:
            pattern: A regular expression, e.g. 'TODO|FIXME' or 'def \\w+_test'.
            files: Only files whose name matches this glob, e.g. 'notes/*.md'.
            limit: The most lines to return.
        """
        found = await SourceIndex(store, ctx.agent).grep(pattern, files=files, limit=limit)
        count = len(found.hits)
        more = " (more left out; narrow the pattern or files)" if found.truncated else ""
        return FoundLines(
            message=f"{count} line{'s' if count != 1 else ''} in {found.files_searched} "
            f"file{'s' if found.files_searched != 1 else ''}{more}.",
            matches=[FoundLine(file=h.file, line=h.line, text=h.text) for h in found.hits],
            truncated=found.truncated,
        )

    @tool(category="files", actions=["read"], summary="Read lines of one of the user's files.")
    async def open_file(
        ctx: ToolContext,
        file: Annotated[str, Field(min_length=1, max_length=2_000)],
        line: Annotated[int, Field(ge=1)] = 1,
        lines: Annotated[int, Field(ge=1, le=MAX_WINDOW_LINES)] = 100,
    ) -> FileLines:
        """Read a window of lines of one of the user's files, as it is on disk now.

        Args:
            file: The file's name as search_files or grep_files gave it.
            line: The first line to show (1-based).
            lines: How many lines to show.
        """
        window = await SourceIndex(store, ctx.agent).open(file, line=line, lines=lines)
        width = len(str(window.end))
        text = "\n".join(
            f"{number:>{width}}| {content}"
            for number, content in enumerate(window.lines, start=window.start)
        )
        return FileLines(
            file=window.file, start=window.start, end=window.end, total=window.total, text=text
        )

    return [search_files, grep_files, open_file]
