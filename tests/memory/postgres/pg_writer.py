"""A writer process for the cross-process tests: opens a PostgresStore on the URL
given, prints ``ready``, waits for ``go`` on stdin, then does its job and prints the
outcome.

Jobs:
    append URL NAME COUNT      append COUNT lines NAME-0 ... to ada's block ``log``
    update URL VERSION TEXT    overwrite ada's block ``doc`` expecting VERSION
"""

from __future__ import annotations

import sys

import anyio

from satchel import VersionConflictError
from satchel.memory.postgres import PostgresStore


async def main(job: str, url: str, args: list[str]) -> None:
    async with await PostgresStore.open(url, embedder=None, max_connections=2) as store:
        print("ready", flush=True)
        if sys.stdin.readline().strip() != "go":
            return
        if job == "append":
            name, count = args[0], int(args[1])
            for i in range(count):
                await store.append_to_block("ada", "log", f"{name}-{i}")
            print("done", flush=True)
        elif job == "update":
            try:
                await store.update_block_text("ada", "doc", args[1], expected_version=int(args[0]))
                print("won", flush=True)
            except VersionConflictError:
                print("conflict", flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3:])
