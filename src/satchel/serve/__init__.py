"""Do what ``satchel serve`` does, from Python: one :class:`ServeOptions` holds every
option, and :func:`run_serve` serves it over stdio or streamable HTTP.

Example::

    import anyio
    from satchel.serve import ServeOptions, run_serve

    options = ServeOptions(db="memory.db", agent="ada", tools=("mytools:registry",))
    anyio.run(run_serve, options)  # stdio; http=("127.0.0.1", 8765) for HTTP

The command line (:mod:`satchel.cli`) only parses its flags into a :class:`ServeOptions`
and calls :func:`run_serve`. What is served is built in steps, each of them callable on
its own:

1. At startup the memory store at ``db`` (default: :func:`~satchel.memory.default_path`)
   and a :class:`~satchel.consent.PermissionBroker` on the same database are opened
   (:func:`database_location` checks the location first); both are closed at shutdown.
   The ``agent`` is set up with its starting blocks the first time it is served
   (:meth:`~satchel.memory.MemoryStore.ensure_agent`: ``persona`` and ``human``, or the
   ``template``'s).
2. :func:`build_catalog` gathers every tool: the built-in memory tools
   (:func:`memory_tools`: ``context``, ``recall``, ``search``, ``send_message``, minus
   those ``replace`` hands to a ``tools`` registry; none when ``memory`` is false), the
   productivity toolkit, and each ``tools`` registry (:func:`load_tools`). The
   ``mounts`` servers are then mounted into the catalog, and :func:`add_chains`
   registers the ``chains`` over all of it (a chain may use a mounted tool).
3. :func:`served_registry` decides what clients see: the catalog behind the approval
   gate (:func:`~satchel.mcp.with_mcp_approval`), or with ``lazy`` the three
   meta-tools over it (gated by the same broker) plus the ``pins`` tools.
4. Every tool's :class:`~satchel.ToolContext` carries the agent's memory, the message
   router and the broker (``ctx.memory``, ``ctx.router``, ``ctx.broker``). Unless
   ``memory`` is false, the server gets the agent's rendered context as its
   ``instructions`` and as the ``memory`` prompt (:class:`~satchel.mcp.MemoryPrompts`),
   and its memory blocks as resources (:class:`~satchel.mcp.MemoryResources`); memory
   writes announce ``resources/list_changed``, and ``resources/updated`` to clients
   subscribed to a block that changed (also when another process changed it).

``channels`` (:mod:`satchel.channels`, opened with :func:`open_channels`) gives
``send_message`` its Discord, Bluesky and webhook endpoints and announces consent
requests on the channel they came from.

Memory writes are decided by the block's permission alone (DESIGN §4): at
``read_write`` and ``admin`` they run at once, a ``partner``/``human`` block asks for
consent and waits at most ``consent_wait`` seconds (see
:class:`~satchel.mcp.MemoryConsent`). satchel's own approval gate holds the calls of
other tools that ``approve`` names (destructive ones by default): the client's human
approves through elicitation when the client supports it, else the call returns
``pending_confirmation`` and ``satchel approvals approve ID --db ...`` decides; the
model then calls again with ``approval_id``. Every approval binds to ``agent``.

A value that came from an option and cannot be served raises
:class:`~satchel.SatchelUsageError` with ``details["option"]`` naming the option
(``"--tools"``, ``"--pin"``...), which the CLI prints as that option's error.
"""

from satchel.serve._catalog import add_chains, build_catalog, memory_tools, served_registry
from satchel.serve._channels import open_channels
from satchel.serve._listen import listen_problem
from satchel.serve._load import check_replacements, load_object, load_registry, load_tools
from satchel.serve._location import database_location
from satchel.serve._options import AUTO_AGENT, MountSpec, ServeOptions
from satchel.serve._run import run_serve

__all__ = [
    "AUTO_AGENT",
    "MountSpec",
    "ServeOptions",
    "add_chains",
    "build_catalog",
    "check_replacements",
    "database_location",
    "listen_problem",
    "load_object",
    "load_registry",
    "load_tools",
    "memory_tools",
    "open_channels",
    "run_serve",
    "served_registry",
]
