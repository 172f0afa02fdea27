"""What ``satchel serve`` is asked to serve, as one object (:class:`ServeOptions`), and
the error a value from one of its options raises (:func:`option_error`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from satchel._errors import SatchelUsageError
from satchel.consent import ApprovalPolicy
from satchel.memory import DEFAULT_GLOBAL_LABELS, AgentTemplate, MarkdownReport

if TYPE_CHECKING:
    from satchel.channels import ChannelConfig
    from satchel.compat import CompatProfile
    from satchel.embed import Embedder
    from satchel.registry import BaseRegistry
    from satchel.toolkit import ToolkitConfig

__all__ = ["AUTO_AGENT", "MountSpec", "ServeOptions", "option_error"]

AUTO_AGENT = "auto"
"""``agent="auto"`` (``--agent auto``): each client's memory is the project it has open."""


def option_error(option: str, message: str) -> SatchelUsageError:
    """A :class:`~satchel.SatchelUsageError` about the value of ``option`` (named in its
    ``details["option"]``, so the CLI can print it as that option's error)."""
    return SatchelUsageError(message, details={"option": option})


@dataclass(frozen=True, kw_only=True)
class MountSpec:
    """One MCP server whose tools are mounted into the catalog (``--mount``): a prefix
    and either a command line (a stdio server) or a URL (streamable HTTP).

    Example:
        ``MountSpec(prefix="git", command="uvx", args=("mcp-server-git",))``
    """

    prefix: str
    command: str | None = None
    args: tuple[str, ...] = ()
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    """HTTP headers sent to a URL server (``--mount-header``)."""


@dataclass(frozen=True, kw_only=True)
class ServeOptions:
    """Everything ``satchel serve`` is asked for, as one object; :func:`run_serve` serves
    it. Each field is the option of the same meaning (named in its description), and
    every default is the command line's.

    Example:
        ``ServeOptions(db="memory.db", agent="ada", tools=("mytools:registry",),
        lazy=True, http=("127.0.0.1", 8765), token="s3cret")``
    """

    tools: tuple[str | BaseRegistry, ...] = ()
    """``--tools``: the registries served beside memory, each a ``MODULE:ATTR`` (or
    ``path/to/file.py:ATTR``) target or a :class:`~satchel.ToolRegistry` itself."""
    chains: tuple[Path, ...] = ()
    """Config files of chains (``--chains``), registered over every tool served."""
    lazy: bool = False
    """``--lazy``: serve the three meta-tools (and the ``pins``) instead of the catalog."""
    pins: tuple[str, ...] = ()
    """``--pin``: with ``lazy``, tools also served directly."""
    agent: str = "default"
    """``--agent``: whose memory is served; :data:`AUTO_AGENT` for each client's project."""
    db: Path | str | None = None
    """``--db``: the SQLite file or ``postgresql://`` URL; ``None`` for the default file."""
    embedder: Embedder | Literal["default"] | None = "default"
    """``--embedder``: memory's embedding model; ``"default"`` for the bundled one (keyword
    search only if its files are missing), ``None`` for keyword search only."""
    mounts: tuple[MountSpec, ...] = field(default=())
    """``--mount``: other MCP servers whose tools join the catalog."""
    consent_wait: float = 5.0
    """``--consent-wait``: seconds a memory write that needs consent waits for it."""
    approve: ApprovalPolicy = ApprovalPolicy.DESTRUCTIVE
    """Which calls of tools outside memory wait for a human (``--approve``)."""
    compat: CompatProfile | None = None
    """``--compat``: answer in a seed's result shapes (``agenticpal`` or ``pattern``,
    see docs/compat.md); ``None`` for satchel's own."""
    template: AgentTemplate | None = None
    """The starting blocks of a new agent; ``None`` for persona and human."""
    toolkit: ToolkitConfig | None = None
    """``--toolkit productivity``'s configuration; ``None`` to serve no toolkit."""
    global_agent: str = "default"
    """With ``agent="auto"``: the person's own agent (used without workspace roots)."""
    global_labels: tuple[str, ...] = DEFAULT_GLOBAL_LABELS
    """With ``agent="auto"``: the person's blocks shared into every project."""
    project_root: str | None = None
    """With ``agent="auto"``: the workspace used when a client gives no roots
    (``--project-root``, made absolute against the working directory)."""
    mirror: Path | None = None
    """``--mirror``: a folder of Markdown files kept in step with memory."""
    learn: bool = True
    """``--learn/--no-learn``: with ``--lazy``, learn from use which tool serves which
    request (kept in the memory database; in memory for a PostgreSQL one)."""

    replace: tuple[str, ...] = ()
    """Built-in tools a ``--tools`` registry replaces (``--replace``)."""
    memory: bool = True
    """Serve the built-in memory tools and the memory resources (not ``--no-memory``)."""

    channels: ChannelConfig | None = None
    """``--channels``: what ``send_message`` reaches besides the user and other agents."""

    http: tuple[str, int] | None = None
    """``--http``: serve streamable HTTP at ``(host, port)`` (port 0: any free one);
    ``None`` to serve over stdio."""
    token: str | None = None
    """With ``http``: the bearer token every request must carry (``--token``)."""
    console: bool = True
    """With ``--http``: also serve the memory console at ``/console`` (``--no-console``
    to leave it out)."""

    on_ready: Callable[[str | None], None] | None = None
    """Called once the server is ready: with the URL it listens at over HTTP, with
    ``None`` over stdio just before it reads stdin. ``None``: logged at INFO."""
    on_mirror_report: Callable[[str, MarkdownReport], None] | None = None
    """Called with an agent and what its ``mirror`` could not apply (conflicts, refused
    files). ``None``: logged as warnings."""

    @property
    def per_project(self) -> bool:
        """Whether each client's memory is its project's (``--agent auto``)."""
        return self.agent == AUTO_AGENT

    @property
    def person(self) -> str:
        """The agent used when no project decides: ``--agent``, or with ``auto`` the
        ``--person``."""
        return self.global_agent if self.per_project else self.agent
