"""Fixtures for the meta-tool tests: the real embedder (loaded once), a small catalog,
and the shared data folder when it is there."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt
import pytest
from pydantic import BaseModel, Field

from satchel import Tool, ToolAnnotations, ToolContext, ToolRegistry, tool
from satchel.embed import MiniLMEmbedder, default_embedder
from satchel.meta import MetaTools


@pytest.fixture(scope="session")
def embedder() -> MiniLMEmbedder:
    return default_embedder()


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: MiniLMEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts.extend(texts)
        return self.inner.embed(texts)


class Ticket(BaseModel):
    operation: Literal["read"]
    id: int


class Close(BaseModel):
    operation: Literal["close"]
    id: int
    reason: str = ""


class Purge(BaseModel):
    operation: Literal["purge"]
    id: int


TicketOp = Annotated[Ticket | Close | Purge, Field(discriminator="operation")]


class Log:
    """What the catalog's tools did."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []


def make_catalog(log: Log) -> ToolRegistry:
    """Twelve tools in four categories, one multi-operation tool with a destructive
    operation, and one destructive tool."""

    @tool(category="weather", actions=["read"], read_only=True)
    def get_forecast(city: str, days: int = 3) -> str:
        """Get the weather forecast for a city: temperature, rain and wind.

        Args:
            city: City name.
            days: How many days ahead.
        """
        log.calls.append(("get_forecast", city))
        return f"sunny in {city}"

    @tool(category="weather", actions=["read"], read_only=True)
    def air_quality(zip_code: str) -> str:
        """Air quality index and pollution levels for a US zip code."""
        return "good"

    @tool(category="files", actions=["read"], read_only=True)
    def read_file(path: str) -> str:
        """Read the contents of a text file from disk."""
        log.calls.append(("read_file", path))
        return "text"

    @tool(category="files", actions=["create", "update"])
    def write_file(path: str, content: str) -> str:
        """Write text to a file on disk, creating or overwriting it."""
        log.calls.append(("write_file", path))
        return "written"

    @tool(category="files", actions=["delete"], destructive=True)
    def delete_file(path: str) -> str:
        """Permanently delete a file from disk.

        Args:
            path: The file to delete.
        """
        log.calls.append(("delete_file", path))
        return f"deleted {path}"

    @tool(category="github", actions=["create"])
    def create_issue(repo: str, title: str, body: str = "") -> str:
        """Open a new issue in a GitHub repository."""
        return "issue #1"

    @tool(category="github", actions=["read"], read_only=True)
    def list_pull_requests(repo: str) -> list[str]:
        """List the open pull requests of a GitHub repository."""
        return []

    @tool(category="github", actions=["delete"], destructive=True)
    def delete_branch(repo: str, branch: str) -> str:
        """Delete a branch from a GitHub repository."""
        return "gone"

    @tool(category="finance", actions=["read"], read_only=True)
    def stock_price(symbol: str) -> float:
        """Current stock price for a ticker symbol, from the exchange."""
        return 1.0

    @tool(category="finance", actions=["read"], read_only=True)
    def convert_currency(amount: float, source: str, target: str) -> float:
        """Convert an amount of money between currencies at today's exchange rate."""
        return amount

    @tool
    def translate_text(text: str, language: str) -> str:
        """Translate text into another language."""
        return text

    class Tickets(Tool[TicketOp, str]):
        name = "tickets"
        description = "Read, close or purge support tickets."
        category = "support"
        actions = ("read", "update", "delete")
        operation_annotations: ClassVar[dict[str, ToolAnnotations]] = {
            "read": ToolAnnotations(read_only=True),
            "purge": ToolAnnotations(destructive=True),
        }

        async def execute(self, params: Any, ctx: ToolContext) -> str:
            log.calls.append(("tickets", params.operation))
            return params.operation

    return ToolRegistry(
        [
            get_forecast,
            air_quality,
            read_file,
            write_file,
            delete_file,
            create_issue,
            list_pull_requests,
            delete_branch,
            stock_price,
            convert_currency,
            translate_text,
            Tickets(),
        ]
    )


@pytest.fixture
def log() -> Log:
    return Log()


@pytest.fixture
def catalog(log: Log) -> ToolRegistry:
    return make_catalog(log)


@pytest.fixture
def meta(catalog: ToolRegistry, embedder: MiniLMEmbedder) -> Iterator[MetaTools]:
    made = MetaTools(catalog, embedder=embedder)
    yield made
    made.close()


def shared_data() -> Path | None:
    """``shared/data`` beside the checkout, walking up from this file."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return None


@pytest.fixture
def data_dir() -> Path:
    found = shared_data()
    if found is None:
        pytest.skip("shared/data not found beside the checkout (benchmark data absent)")
    return found
