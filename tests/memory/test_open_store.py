"""open_store: one way to open a store from a path or a URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from satchel import InvalidInputError
from satchel.consent import SQLiteApprovalStore, open_approval_store
from satchel.memory import (
    SQLiteStore,
    default_path,
    is_postgres_url,
    open_store,
    store_location,
)

from .conftest import PostgresDatabases

pytestmark = pytest.mark.anyio


def test_a_path_a_sqlite_url_and_nothing_name_sqlite_files(tmp_path: Path) -> None:
    file = tmp_path / "m.db"
    assert store_location(str(file)) == file
    assert store_location(f"sqlite:///{file}") == file
    assert store_location(file) == file
    assert store_location(None) == default_path()
    assert store_location("  ") == default_path()


def test_a_postgres_url_is_kept_as_it_is() -> None:
    url = "postgresql://u:p@localhost:5432/db"
    assert is_postgres_url(url)
    assert is_postgres_url("postgres://h/db")
    assert store_location(url) == url
    assert not is_postgres_url(Path("postgresql:"))


@pytest.mark.parametrize("target", ["mysql://h/db", "http://example.com/x"])
def test_an_unsupported_url_is_an_input_error_naming_the_scheme(target: str) -> None:
    with pytest.raises(InvalidInputError, match="URLs are not supported") as caught:
        store_location(target)
    assert caught.value.details["scheme"] == target.split("://")[0]


def test_a_folder_is_refused_with_a_file_suggested(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="is a folder"):
        store_location(str(tmp_path))


async def test_must_exist_refuses_to_create_a_file(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    with pytest.raises(InvalidInputError, match="no memory database"):
        await open_store(missing, must_exist=True, embedder=None)
    assert not missing.exists()


async def test_open_store_opens_sqlite_for_a_path(tmp_path: Path) -> None:
    store = await open_store(tmp_path / "m.db", embedder=None)
    try:
        assert isinstance(store, SQLiteStore)
        await store.ensure_agent("ada")
        assert {b.label for b in await store.list_blocks("ada")} >= {"persona", "human"}
    finally:
        await store.close()
    assert isinstance(open_approval_store(tmp_path / "m.db"), SQLiteApprovalStore)


@pytest.mark.postgres
async def test_open_store_opens_postgres_for_a_url(
    postgres_databases: PostgresDatabases,
) -> None:
    from satchel.consent import PostgresApprovalStore
    from satchel.memory.postgres import PostgresStore

    url = postgres_databases.fresh()
    store = await open_store(url, embedder=None)
    try:
        assert isinstance(store, PostgresStore)
        await store.ensure_agent("ada")
        assert {b.label for b in await store.list_blocks("ada")} >= {"persona", "human"}
    finally:
        await store.close()
    assert isinstance(open_approval_store(url), PostgresApprovalStore)
