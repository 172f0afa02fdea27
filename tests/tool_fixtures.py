"""Tools used across the tool and registry tests (the DESIGN §1 examples, and more)."""

from __future__ import annotations

import time
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from satchel import Tool, ToolAnnotations, ToolContext, ToolFailed, ToolRetry, tool


class CountIn(BaseModel):
    text: str = Field(description="Text to count words in")


class CountOut(BaseModel):
    count: int


class WordCount(Tool[CountIn, CountOut]):
    name = "word_count"
    description = "Counts words in text."
    usage_rule = "Use for exact counts; never estimate."

    async def execute(self, params: CountIn, ctx: ToolContext) -> CountOut:
        return CountOut(count=len(params.text.split()))


class SyncWordCount(Tool[CountIn, CountOut]):
    """Counts words in text, synchronously."""

    name = "sync_word_count"

    def execute(self, params: CountIn, ctx: ToolContext) -> CountOut:
        return CountOut(count=len(params.text.split()))


@tool(category="math", actions=["read"])
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


class Read(BaseModel):
    operation: Literal["read"]
    path: str


class Write(BaseModel):
    operation: Literal["write"]
    path: str
    content: str


class Delete(BaseModel):
    operation: Literal["delete"]
    path: str


FileOp = Annotated[Read | Write | Delete, Field(discriminator="operation")]


class FileOut(BaseModel):
    operation: str
    path: str
    content: str | None = None


class Files(Tool[FileOp, FileOut]):
    name = "files"
    description = "Read, write or delete a file in the agent's scratch space."
    operation_annotations = {"delete": ToolAnnotations(destructive=True)}  # noqa: RUF012

    def __init__(self) -> None:
        self.store: dict[str, str] = {}

    async def execute(self, params: Read | Write | Delete, ctx: ToolContext) -> FileOut:
        match params:
            case Read(path=path):
                if path not in self.store:
                    raise ToolFailed(f"No file at {path!r}.")
                return FileOut(operation="read", path=path, content=self.store[path])
            case Write(path=path, content=content):
                self.store[path] = content
                return FileOut(operation="write", path=path)
            case Delete(path=path):
                self.store.pop(path, None)
                return FileOut(operation="delete", path=path)


class Tags(BaseModel):
    names: list[str]
    limits: dict[str, int] = Field(default_factory=dict)


@tool
def tag_count(tags: Tags, ctx: ToolContext) -> dict[str, int]:
    """Count tags for the calling agent.

    Args:
        tags: The tags to count.
    """
    return {"count": len(tags.names), "agent_len": len(ctx.agent)}


@tool
def flaky(mode: Literal["retry", "fail", "crash", "ok"]) -> str:
    """Behave as told, to exercise every error path.

    Args:
        mode: What to do.
    """
    if mode == "retry":
        raise ToolRetry("Try again with mode='ok'.")
    if mode == "fail":
        raise ToolFailed("This always fails.", details={"why": "test"})
    if mode == "crash":
        raise RuntimeError("secret internal detail")
    return "fine"


@tool
async def slow(seconds: Annotated[float, Field(ge=0, le=10)] = 0.0) -> str:
    """Sleep asynchronously, then answer.

    Args:
        seconds: How long to sleep.
    """
    import anyio

    await anyio.sleep(seconds)
    return "done"


@tool
def slow_sync(seconds: Annotated[float, Field(ge=0, le=10)] = 0.0) -> str:
    """Sleep in a worker thread, then answer.

    Args:
        seconds: How long to sleep.
    """
    time.sleep(seconds)
    return "done"


def all_test_tools() -> list[object]:
    """A fresh instance of every test tool."""
    return [WordCount(), SyncWordCount(), add, Files(), tag_count, flaky, slow, slow_sync]
