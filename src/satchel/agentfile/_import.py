"""Importing an agent file into a memory store: checked in full, then written in one
transaction, so a refused file leaves nothing behind."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import anyio

from satchel._errors import AlreadyExistsError
from satchel.agentfile._plan import agent_names, plan_import
from satchel.agentfile._read import read_agent_file
from satchel.agentfile._report import AgentFileReport
from satchel.agentfile._schema import LettaAgentFile
from satchel.memory import AgentTemplate, Block, MemoryStore, Message

__all__ = ["IMPORT_TEMPLATE", "check_document", "import_agent_file", "import_document"]

IMPORT_TEMPLATE = "agent-file"
"""The template name an imported agent is recorded with (``satchel memory agents``)."""

ProgressCallback = Callable[[int, int], None]


async def import_agent_file(
    store: MemoryStore,
    path: str | Path,
    *,
    name: str | None = None,
    progress: ProgressCallback | None = None,
) -> AgentFileReport:
    """Import the Letta Agent File at ``path`` into ``store`` as a new agent (and one
    more for each further agent of the file, named ``NAME:its name``).

    Code in the file is never run: its tools are listed in the report with what to do
    about each, and its MCP servers as ``--mount`` suggestions.

    Args:
        store: The memory store to write into.
        path: The ``.af`` file.
        name: The agent's name in satchel; default: its name in the file.
        progress: Called with (records written, records in all) as the import goes.

    Raises:
        InvalidInputError: The file is refused (one line saying why); nothing was
            written.
        AlreadyExistsError: An agent of that name exists already in ``store``.

    Example:
        >>> report = await import_agent_file(store, "memgpt_agent.af")  # doctest: +SKIP
        >>> report.agents, report.blocks
        (['memgpt_agent'], 2)
    """
    document = await anyio.to_thread.run_sync(read_agent_file, path)
    return await import_document(store, document, name=name, progress=progress)


async def import_document(
    store: MemoryStore,
    document: LettaAgentFile,
    *,
    name: str | None = None,
    progress: ProgressCallback | None = None,
) -> AgentFileReport:
    """:func:`import_agent_file` for a file already read (see
    :func:`~satchel.agentfile.parse_agent_file`)."""
    names = agent_names(document, name)
    plan = plan_import(document, names)
    await _check_free(store, names)
    records = plan.records
    await store.import_records(_counted(records, progress), on_conflict="error", batch_size=64)
    template = AgentTemplate(name=IMPORT_TEMPLATE)
    for agent in names:  # marks each set up, so no starting blocks are added later
        await store.ensure_agent(agent, template)
    return plan.report


def check_document(document: LettaAgentFile, *, name: str | None = None) -> AgentFileReport:
    """Check ``document`` in full, as an import would, without a store: the report an
    import would give, or the error it would raise (see :func:`import_agent_file`)."""
    return plan_import(document, agent_names(document, name)).report


async def _check_free(store: MemoryStore, names: Sequence[str]) -> None:
    for agent in names:
        for summary in await store.describe_agents(agent):
            if summary.initialised or summary.blocks or summary.archival or summary.messages:
                raise AlreadyExistsError(
                    f"agent {agent!r} exists already in this store; import under another "
                    "name (--as NAME). Nothing was imported.",
                    details={"agent": agent},
                )


def _counted(
    records: Sequence[Block | Message], progress: ProgressCallback | None
) -> Iterator[Block | Message]:
    total = len(records)
    for done, record in enumerate(records, start=1):
        yield record
        if progress is not None:
            progress(done, total)
