"""``--embedder`` and ``--embed-base-url`` on the command line: ``memory reembed`` moves a
database to a provider's model (resuming after an interruption), ``memory search`` uses
it and warns when the database holds another model's vectors, and a bad spec is one
line. The provider is a local server speaking OpenAI's embeddings wire format."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from typer.testing import CliRunner, Result

from agent.fake_openai import serving
from embed.fake_embeddings import FakeEmbeddings
from memory.conftest import HashEmbedder
from satchel.cli import app
from satchel.memory import BlockKind, SQLiteStore

runner = CliRunner()

TEXTS = [f"note {i} about {a}" for i, a in enumerate(["kiwis", "otters", "owls", "lemurs"] * 2)]


@pytest.fixture
def fake() -> FakeEmbeddings:
    return FakeEmbeddings(dim=16)


@pytest.fixture
def url(fake: FakeEmbeddings) -> Iterator[str]:
    with serving(fake) as base:
        yield base


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"

    async def fill() -> None:
        async with SQLiteStore(path, embedder=HashEmbedder()) as store:
            for i, text in enumerate(TEXTS):
                await store.create_block("default", f"n{i}", text, kind=BlockKind.ARCHIVAL)

    anyio.run(fill)
    return path


def satchel(*args: str) -> Result:
    env = {"COLUMNS": "200", "SATCHEL_EMBED_API_KEY": "", "OPENAI_API_KEY": ""}
    return runner.invoke(app, list(args), env=env, catch_exceptions=False)


def sizes(db: Path) -> list[int]:
    with sqlite3.connect(db) as conn:
        return [n for (n,) in conn.execute("SELECT length(vec) / 4 FROM embeddings")]


def test_reembed_moves_to_the_provider_and_resumes_after_a_failure(
    db: Path, fake: FakeEmbeddings, url: str
) -> None:
    provider = ("--embedder", "openai:fake-embed", "--embed-base-url", url)
    fake.fail_after = 2  # the size probe and one page of three, then 500s
    failed = satchel("memory", "reembed", "--db", str(db), *provider, "--batch-size", "3")
    assert failed.exit_code == 1
    assert failed.stderr.strip().splitlines()[-1] == (
        f"Error: {url} failed (500): The server had an error; once it works, run the same "
        "command again to go on where it stopped."
    )
    assert sizes(db) == [16, 16, 16]

    fake.fail_after = None
    done = satchel("memory", "reembed", "--db", str(db), *provider, "--batch-size", "3")
    assert done.exit_code == 0, done.output
    assert done.stderr.strip().splitlines()[-1] == "Embedded 5 texts."
    assert sorted(sizes(db)) == [16] * len(TEXTS)

    found = satchel("memory", "search", "otters", "--db", str(db), *provider, "--json")
    assert found.exit_code == 0, found.output
    assert "warning" not in found.stderr
    assert "note 1 about otters" in found.stdout


def test_search_with_the_old_model_warns_and_names_the_command(
    db: Path, fake: FakeEmbeddings, url: str
) -> None:
    provider = ("--embedder", "openai:fake-embed", "--embed-base-url", url)
    assert satchel("memory", "reembed", "--db", str(db), *provider).exit_code == 0
    found = satchel("memory", "search", "otters", "--db", str(db), "--embedder", "none")
    assert found.exit_code == 0
    assert "warning" not in found.stderr  # no embedder: keyword search, as asked
    hashed = satchel("memory", "search", "otters", "--db", str(db), "--embedder", "openai:other",
                     "--embed-base-url", url)  # fmt: skip
    assert hashed.exit_code == 1  # the server does not serve that model
    assert "is the model name right?" in hashed.stderr


def test_a_bad_embedder_is_one_line_with_exit_status_2(db: Path) -> None:
    for args, hint in (
        (("--embedder", "cohere:x"), "'--embedder'"),
        (
            ("--embedder", "default", "--embed-base-url", "http://127.0.0.1:9/v1"),
            "'--embed-base-url'",
        ),
        (("--embedder", "none"), "'--embedder'"),
    ):
        result = satchel("memory", "reembed", "--db", str(db), *args)
        assert result.exit_code == 2, result.output
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith(f"Error: Invalid value for {hint}: "), line


def test_the_commands_that_open_memory_take_the_embedder_options() -> None:
    for command in (["serve"], ["run"], ["chat"], ["console"], ["memory", "reembed"],
                    ["memory", "search"]):  # fmt: skip
        shown = satchel(*command, "--help")
        assert "--embedder" in shown.stdout
        assert "--embed-base-url" in shown.stdout


def test_a_bare_reembed_never_moves_a_providers_database_back_to_the_bundled_model(
    db: Path, url: str
) -> None:
    provider = ("--embedder", "openai:fake-embed", "--embed-base-url", url)
    assert satchel("memory", "reembed", "--db", str(db), *provider).exit_code == 0
    bare = satchel("memory", "reembed", "--db", str(db))
    assert bare.exit_code == 2
    line = bare.stderr.strip().splitlines()[-1]  # (after the warning logged at open)
    assert "holds vectors of 'openai:fake-embed' (16 dimensions)" in line
    assert "or use --embedder openai:fake-embed, as they were written" in line
    assert sorted(sizes(db)) == [16] * len(TEXTS)
    renewed = satchel("memory", "reembed", "--db", str(db), *provider)
    assert renewed.exit_code == 0
    assert renewed.stderr.strip().splitlines()[-1] == f"Embedded {len(TEXTS)} texts."
