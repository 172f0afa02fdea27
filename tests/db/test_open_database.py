"""satchel.db: one URL → backend switch that every component asks, and a new backend
that is one registration."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from satchel import InvalidInputError, SatchelUsageError, StorageError
from satchel.consent import SQLiteApprovalStore, open_approval_store
from satchel.db import (
    Database,
    DatabaseBackend,
    backends,
    open_database,
    register_backend,
    unregister_backend,
)
from satchel.db.sqlite import default_path
from satchel.memory import SQLiteStore, open_store
from satchel.meta import SQLiteUsageStore, open_usage_store

pytestmark = pytest.mark.anyio


def test_a_path_a_sqlite_url_and_nothing_are_the_sqlite_backend(tmp_path: Path) -> None:
    file = tmp_path / "m.db"
    for target in (file, str(file), f"sqlite:///{file}"):
        database = open_database(target)
        assert (database.dialect, database.location, database.path) == ("sqlite", file, file)
    assert open_database(None).location == default_path()


def test_a_postgresql_url_is_the_postgresql_backend_and_loads_no_driver() -> None:
    url = "postgresql://u:p@localhost:5432/db"
    database = open_database(url)
    assert (database.dialect, database.location, database.path) == ("postgresql", url, None)
    assert open_database("postgres://h/db").dialect == "postgresql"


def test_an_unknown_scheme_names_every_registered_backend() -> None:
    with pytest.raises(InvalidInputError) as caught:
        open_database("mysql://h/db")
    assert caught.value.message == (
        "'mysql' URLs are not supported; give a file path, a sqlite:/// URL or a postgresql:// URL"
    )


def test_a_database_is_returned_as_it_is(tmp_path: Path) -> None:
    database = open_database(tmp_path / "m.db")
    assert open_database(database) is database


def test_a_taken_name_or_scheme_is_refused() -> None:
    twin = DatabaseBackend(name="pg2", schemes=("postgres",), example="x", components={})
    with pytest.raises(SatchelUsageError, match="registered already"):
        register_backend(twin)


def test_a_component_the_backend_lacks_is_a_storage_error(tmp_path: Path) -> None:
    database = open_database(tmp_path / "m.db")
    with pytest.raises(StorageError, match="no calendar store"):
        database.component("calendar")


def _folder_of(target: str | Path | None, must_exist: bool) -> str | Path:
    assert isinstance(target, str)
    return Path(target.removeprefix("folder://")) / "satchel.db"


@pytest.fixture
def folder_backend() -> Iterator[DatabaseBackend]:
    # A backend from outside satchel: a folder URL that holds SQLite stores. Nothing in
    # satchel names it; one registration makes every component open it.
    backend = DatabaseBackend(
        name="folder",
        schemes=("folder",),
        example="a folder:// URL",
        components={
            "memory": "satchel.memory:SQLiteStore.open",
            "approvals": "satchel.consent:SQLiteApprovalStore",
            "usage": "satchel.meta:SQLiteUsageStore",
        },
        locate=_folder_of,
    )
    register_backend(backend)
    yield backend
    unregister_backend("folder")
    assert "folder" not in {b.name for b in backends()}


async def test_a_registered_backend_serves_memory_approvals_and_usage(
    tmp_path: Path, folder_backend: DatabaseBackend
) -> None:
    target = f"folder://{tmp_path}"
    database = open_database(target)
    assert isinstance(database, Database)
    assert database.backend is folder_backend
    store = await open_store(target, embedder=None)
    try:
        assert isinstance(store, SQLiteStore)
        assert store.path == tmp_path / "satchel.db"
        await store.create_block("ada", "persona", "I am Ada.")
    finally:
        await store.close()
    approvals = open_approval_store(database)
    usage = open_usage_store(target)
    try:
        assert isinstance(approvals, SQLiteApprovalStore)
        assert isinstance(usage, SQLiteUsageStore)
        await usage.learn("c", "delete a branch", "delete_branch")
        assert await approvals.list() == []
    finally:
        await approvals.close()
        usage.close()
    again = await open_store(target, must_exist=True, embedder=None)
    try:
        assert (await again.get_block("ada", "persona")).value == "I am Ada."
        assert [p.tool for p in await SQLiteUsageStore(store.path).pairs("c")] == ["delete_branch"]
    finally:
        await again.close()
