"""A small demo registry, the default of ``satchel tools --tools``.

It shows each way to define a tool: a typed :class:`~satchel.Tool` (``word_count``), a
function tool (``add``), a multi-operation tool whose ``delete`` is destructive
(``notes``) and a raw tool with a hand-written JSON schema (``echo``)::

    uv run satchel tools list
    uv run satchel tools call add '{"a": 2, "b": 3}'
    uv run satchel tools schema notes --dialect anthropic

Use :func:`build_registry` for a fresh registry with its own notes.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field

from satchel._errors import ToolRetry
from satchel.registry import ToolRegistry
from satchel.tools import Tool, ToolAnnotations, ToolContext, tool

__all__ = [
    "CountIn",
    "CountOut",
    "DeleteNote",
    "NoteOperation",
    "NoteResult",
    "Notes",
    "ReadNote",
    "Title",
    "WordCount",
    "WriteNote",
    "add",
    "build_registry",
    "registry",
]


class CountIn(BaseModel):
    """The input of ``word_count``."""

    text: str = Field(description="The text to count the words of.")


class CountOut(BaseModel):
    """The output of ``word_count``."""

    count: int = Field(description="How many words the text has.")


class WordCount(Tool[CountIn, CountOut]):
    """Count the words in a text.

    Words are runs of characters separated by whitespace, so "well-known" is one word
    and punctuation on its own between spaces counts as a word.
    """

    name = "word_count"
    usage_rule = "Use it for exact word counts; never estimate."
    category = "text"
    actions = ("read",)
    read_only = True
    idempotent = True

    async def execute(self, params: CountIn, ctx: ToolContext) -> CountOut:
        """Split on whitespace and count the pieces."""
        return CountOut(count=len(params.text.split()))


@tool(category="math", actions=["read"], read_only=True, idempotent=True)
def add(a: int, b: int) -> int:
    """Add two integers and return their sum.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


Title = Annotated[
    str, Field(description="The note's title (case-sensitive).", min_length=1, max_length=200)
]
"""A note's title, the same in every ``notes`` operation."""


class ReadNote(BaseModel):
    """Read the note with this title."""

    operation: Literal["read"]
    title: Title


class WriteNote(BaseModel):
    """Create a note, or replace the content of the note with this title."""

    operation: Literal["write"]
    title: Title
    content: str = Field(description="The note's full text.")


class DeleteNote(BaseModel):
    """Delete the note with this title."""

    operation: Literal["delete"]
    title: Title


NoteOperation = Annotated[ReadNote | WriteNote | DeleteNote, Field(discriminator="operation")]
"""The input of ``notes``: one of its three operations, chosen by ``operation``."""


class NoteResult(BaseModel):
    """What a ``notes`` operation did."""

    title: str
    content: str | None = Field(
        default=None, description="The note's text (read), or the text just written (write)."
    )
    status: Literal["read", "written", "deleted"]


class Notes(Tool[NoteOperation, NoteResult]):
    """Keep short notes by title: read one, write (create or replace) one, or delete one.

    Notes live in memory for as long as the program runs. Titles are case-sensitive.
    """

    name = "notes"
    summary = "Read, write or delete short notes by title."
    category = "notes"
    actions = ("read", "write", "delete")
    operation_annotations: ClassVar[Mapping[str, ToolAnnotations]] = {
        "read": ToolAnnotations(read_only=True, idempotent=True),
        "write": ToolAnnotations(read_only=False, idempotent=True),
        "delete": ToolAnnotations(read_only=False, destructive=True, idempotent=True),
    }

    def __init__(self) -> None:
        self._notes: dict[str, str] = {}
        self._lock = threading.Lock()

    def execute(self, params: ReadNote | WriteNote | DeleteNote, ctx: ToolContext) -> NoteResult:
        """Run one operation (in a worker thread: this ``execute`` is synchronous)."""
        with self._lock:
            if isinstance(params, WriteNote):
                self._notes[params.title] = params.content
                return NoteResult(title=params.title, content=params.content, status="written")
            if params.title not in self._notes:
                raise ToolRetry(self._missing(params.title))
            if isinstance(params, ReadNote):
                return NoteResult(
                    title=params.title, content=self._notes[params.title], status="read"
                )
            del self._notes[params.title]
            return NoteResult(title=params.title, status="deleted")

    def _missing(self, title: str) -> str:
        if not self._notes:
            return f"There is no note titled {title!r}; there are no notes yet."
        titles = ", ".join(repr(t) for t in sorted(self._notes))
        return f"There is no note titled {title!r}. The notes are: {titles}."


def _echo(args: dict[str, Any]) -> str:
    return str(args["text"])


def build_registry() -> ToolRegistry:
    """A new demo registry: ``word_count``, ``add``, ``notes`` and ``echo``."""
    demo = ToolRegistry([WordCount(), add, Notes()])
    demo.register_raw(
        name="echo",
        description=(
            "Send the given text back unchanged. Use it to check that tool calls work end to end."
        ),
        parameters={
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to send back."}},
            "required": ["text"],
            "additionalProperties": False,
        },
        run=_echo,
        category="debug",
        actions=["read"],
        read_only=True,
        idempotent=True,
    )
    return demo


registry = build_registry()
"""The demo registry that ``satchel tools ...`` uses when no ``--tools`` is given."""
