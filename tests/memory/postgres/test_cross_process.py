"""Several OS processes share one PostgreSQL database: appends from all of them land
exactly once, and optimistic updates conflict across processes as within one."""

from __future__ import annotations

import select
import subprocess
import sys
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from satchel import VersionConflictError
from satchel.memory.postgres import PostgresStore

pytestmark = [pytest.mark.anyio, pytest.mark.postgres]

WRITER = Path(__file__).with_name("pg_writer.py")


@contextmanager
def writers(*commands: list[str]) -> Generator[list[subprocess.Popen[str]]]:
    """Start writer processes and wait until each is ready; kill any left at the end."""
    processes = [
        subprocess.Popen(
            [sys.executable, str(WRITER), *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for command in commands
    ]
    try:
        for process in processes:
            assert process.stdout is not None
            ready, _, _ = select.select([process.stdout], [], [], 60)
            assert ready, "a writer process did not start within 60 s"
            assert process.stdout.readline().strip() == "ready"
        yield processes
    finally:
        for process in processes:
            process.kill()
            process.wait(timeout=30)


def go_and_collect(processes: list[subprocess.Popen[str]], timeout: float = 120) -> list[str]:
    """Tell every process to start at once, then read each one's outcome."""
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    outcomes: list[str] = []
    for process in processes:
        stdout, _ = process.communicate(timeout=timeout)
        assert process.returncode == 0
        outcomes.append(stdout.strip())
    return outcomes


async def test_appends_from_three_processes_and_this_one_all_land_exactly_once(
    pg_store: PostgresStore, pg_url: str
) -> None:
    await pg_store.create_block("ada", "log", "", char_limit=1_000_000)
    count = 150
    with writers(*[["append", pg_url, f"p{n}", str(count)] for n in range(3)]) as processes:
        with anyio.fail_after(150):
            async with anyio.create_task_group() as group:
                group.start_soon(anyio.to_thread.run_sync, go_and_collect, processes)
                for i in range(count):
                    await pg_store.append_to_block("ada", "log", f"me-{i}")
    block = await pg_store.get_block("ada", "log")
    lines = block.value.split("\n")
    names = ["p0", "p1", "p2", "me"]
    assert sorted(lines) == sorted(f"{name}-{i}" for name in names for i in range(count))
    assert block.version == 1 + len(names) * count
    assert block.chars == len(block.value)
    for name in names:  # each process's own lines keep its order
        assert [line for line in lines if line.startswith(f"{name}-")] == [
            f"{name}-{i}" for i in range(count)
        ]


async def test_a_write_by_another_process_makes_this_ones_version_stale(
    pg_store: PostgresStore, pg_url: str
) -> None:
    block = await pg_store.create_block("ada", "doc", "v1")
    with writers(["update", pg_url, str(block.version), "from the other process"]) as procs:
        assert await anyio.to_thread.run_sync(go_and_collect, procs) == ["won"]
    with pytest.raises(VersionConflictError) as info:
        await pg_store.update_block_text("ada", "doc", "mine", expected_version=block.version)
    assert info.value.details["current_version"] == 2
    assert (await pg_store.get_block("ada", "doc")).value == "from the other process"


async def test_racing_optimistic_updates_from_four_processes_let_exactly_one_win(
    pg_store: PostgresStore, pg_url: str
) -> None:
    block = await pg_store.create_block("ada", "doc", "v1")
    commands = [["update", pg_url, str(block.version), f"from {n}"] for n in range(4)]
    with writers(*commands) as processes:
        outcomes = await anyio.to_thread.run_sync(go_and_collect, processes)
    assert sorted(outcomes) == ["conflict"] * 3 + ["won"]
    after = await pg_store.get_block("ada", "doc")
    assert after.version == 2
    assert after.value in {f"from {n}" for n in range(4)}
