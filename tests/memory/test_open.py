"""open_store: one function reads a path or a URL and opens the right backend, gated."""

from __future__ import annotations

from pathlib import Path

import pytest

from satchel import PermissionDeniedError, SatchelUsageError
from satchel.consent import PostgresApprovalStore, SQLiteApprovalStore, open_approval_store
from satchel.memory import (
    ConsentRequest,
    MissingDatabaseError,
    Permission,
    SQLiteStore,
    open_store,
    resolve_location,
)
from satchel.memory.postgres import PostgresStore

from .conftest import PostgresDatabases

pytestmark = pytest.mark.anyio


def test_a_path_a_sqlite_url_and_a_postgres_url_name_their_databases(tmp_path: Path) -> None:
    assert resolve_location(str(tmp_path / "a.db")) == tmp_path / "a.db"
    assert resolve_location(f"sqlite:///{tmp_path}/b.db") == tmp_path / "b.db"
    assert resolve_location(tmp_path / "c.db") == tmp_path / "c.db"
    assert resolve_location("postgres://h/db") == "postgres://h/db"
    assert resolve_location("postgresql://u@h:5/db") == "postgresql://u@h:5/db"


@pytest.mark.parametrize("target", ["ftp://example.org/x.db", "mysql://h/db"])
def test_another_url_scheme_is_a_usage_error_naming_the_scheme(target: str) -> None:
    with pytest.raises(SatchelUsageError, match="URLs are not supported") as caught:
        resolve_location(target)
    assert caught.value.details == {"target": target}


def test_a_folder_is_refused_with_the_file_it_probably_meant(tmp_path: Path) -> None:
    with pytest.raises(SatchelUsageError, match="is a folder"):
        resolve_location(str(tmp_path))


async def test_a_path_opens_a_gated_sqlite_store_that_asks_for_consent(tmp_path: Path) -> None:
    asked: list[ConsentRequest] = []

    async def consent(request: ConsentRequest, /) -> bool:
        asked.append(request)
        return False

    store = await open_store(str(tmp_path / "m.db"), embedder=None, consent=consent)
    try:
        assert isinstance(store, SQLiteStore)
        await store.create_block("ada", "notes", "x", permission=Permission.HUMAN)
        with pytest.raises(PermissionDeniedError):
            await store.append_to_block("ada", "notes", "y")
        assert [r.operation for r in asked] == ["append"]
        assert (await store.get_block("ada", "notes")).value == "x"
    finally:
        await store.close()


async def test_without_create_a_missing_file_is_reported_and_not_created(tmp_path: Path) -> None:
    target = tmp_path / "missing.db"
    with pytest.raises(MissingDatabaseError) as caught:
        await open_store(target, embedder=None, create=False)
    assert caught.value.details == {"path": str(target)}
    assert not target.exists()


def test_the_approval_store_of_a_path_is_the_sqlite_one_of_a_url_the_postgres_one(
    tmp_path: Path,
) -> None:
    sqlite = open_approval_store(str(tmp_path / "m.db"))
    assert isinstance(sqlite, SQLiteApprovalStore)
    assert sqlite.path == tmp_path / "m.db"
    assert isinstance(open_approval_store("postgresql://u@h/db"), PostgresApprovalStore)


@pytest.mark.postgres
async def test_a_postgres_url_opens_the_postgres_store(
    postgres_databases: PostgresDatabases,
) -> None:
    store = await open_store(postgres_databases.fresh(), embedder=None)
    try:
        assert isinstance(store, PostgresStore)
        await store.create_block("ada", "persona", "I am Ada.")
        assert (await store.get_block("ada", "persona")).value == "I am Ada."
    finally:
        await store.close()
