"""``satchel console``: serve the memory console (:mod:`satchel.console`) on its own.

It opens the memory store and the approval records of ``--db`` (the same database
``satchel serve`` and the other commands use) and serves the console on
``--host``/``--port``. Loopback by default; any other address needs ``--token`` (the
same rule as ``serve --http``, without an opt-out: the console writes memory).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Annotated

import anyio
import typer

from satchel._errors import SatchelUsageError
from satchel.cli._embed_options import (
    EmbedBaseUrlOption,
    EmbedderChoice,
    EmbedderOption,
    resolve_embedder,
)
from satchel.cli._listen import check_listen, check_token, is_loopback, typed_on_command_line
from satchel.cli._store import DbOption, resolve_db_location

__all__ = ["DEFAULT_PORT", "console"]

logger = logging.getLogger("satchel.cli.console")

DEFAULT_PORT = 8765
"""The port ``satchel console`` listens on unless ``--port`` says otherwise."""


def console(
    ctx: typer.Context,
    db: DbOption = None,
    embedder: EmbedderOption = None,
    embed_base_url: EmbedBaseUrlOption = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            envvar="SATCHEL_AGENT",
            help="Open this agent's page first (default: the list of agents).",
        ),
    ] = None,
    host: Annotated[
        str,
        typer.Option("--host", help="The address to listen on; not loopback needs --token."),
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option("--port", min=0, max=65535, help="The port (0: any free port)."),
    ] = DEFAULT_PORT,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="SATCHEL_TOKEN",
            help="The operator's token: the login page asks for it (or send "
            "'Authorization: Bearer TOKEN'). Required on an address other than loopback.",
        ),
    ] = None,
) -> None:
    """Serve the memory console: see and edit what agents remember, answer approvals.

    Open the printed URL in a browser. Stop with Ctrl-C.
    """
    if agent is not None and not agent.strip():
        raise typer.BadParameter("must not be empty.", param_hint="'--agent'")
    # A --db that names no database is a typo to report; the default file is made on
    # first use, so a newcomer's first `satchel console` shows a memory, not an error.
    where = resolve_db_location(db, must_exist=db is not None)
    fresh = isinstance(where, Path) and not where.exists()
    loopback = is_loopback(host, hint="'--host'")
    if token is None and not loopback:
        raise typer.BadParameter(
            f"{host} is not a loopback address: anyone who can reach it could read and "
            "change memory, so give --token (or SATCHEL_TOKEN).",
            param_hint="'--host'",
        )
    token = check_token(
        token,
        http=True,
        from_command_line=typed_on_command_line(ctx, "token"),
        environ=os.environ,
        allow_unauthenticated=False,
        loopback=loopback,
    )
    check_listen(host, port, host_hint="'--host'", port_hint="'--port'")
    chosen = resolve_embedder(embedder, embed_base_url)
    try:
        anyio.run(_run, str(where), fresh, agent, host, port, token, chosen)
    except KeyboardInterrupt:
        return


async def _run(
    where: str,
    fresh: bool,
    agent: str | None,
    host: str,
    port: int,
    token: str | None,
    chosen: EmbedderChoice,
) -> None:
    from satchel.consent import PermissionBroker, open_approval_store
    from satchel.console import console_app
    from satchel.db import open_database
    from satchel.embed import default_embedder
    from satchel.mcp.server._http import run_uvicorn
    from satchel.memory import open_store

    embedder = chosen
    if embedder == "default":
        try:
            embedder = default_embedder()
        except SatchelUsageError as exc:
            logger.warning("searching by keywords only: %s", exc.message)
            embedder = None
    database = open_database(where)  # one database for the memory and the approvals
    store = await open_store(database, embedder=embedder)
    try:
        if fresh:  # what `satchel serve` would set up: the default agent's blocks
            await store.ensure_agent("default")
            logger.info("created the memory database %s", where)
        async with PermissionBroker(open_approval_store(database), origin="console") as broker:
            app = console_app(store, broker, token=token, agent=agent)

            def ready(url: str) -> None:
                typer.echo(f"satchel: the memory console is at {url}", err=True)

            await run_uvicorn(app, host, port, path="/", on_ready=ready)
    finally:
        await store.close()
