"""Per-project memory: an agent namespace for the project a client has open.

An MCP client that announces workspace roots (``roots/list``: Cursor, Claude Code, VS
Code) works in a project. :func:`project_for_root` turns a root into a
:class:`Project`, keyed so the same repository gets the same memory on every machine:
its git remote (``github.com/acme/app``, from the repository's ``.git/config``, found
from the root or any folder above it) when it has one, else its absolute path.

:func:`ensure_project` sets the project's agent up the first time (the starting
template without the global labels, plus a ``project`` block for what the model learns
about the project) and shares the *global* blocks of the person's own agent into it,
every time, so a global block made later reaches every project too. A global block is
one the person's agent owns whose label is among ``global_labels`` (``human`` and
``persona`` by default) or that is tagged ``global``: "what I like" follows the person
while "how this repo builds" stays with the repo.

Hand-written: reading a remote from a git config needs no git binary, and no small
library does only that. The config is read with a few lines of parsing, not an INI
parser: git's format allows what :mod:`configparser` rejects (indented keys,
subsection quotes).
"""

from __future__ import annotations

import hashlib
import logging
import posixpath
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from urllib.parse import unquote, urlsplit

from satchel._errors import InvalidInputError, NotFoundError, PermissionDeniedError
from satchel._redact import strip_userinfo
from satchel.memory._models import Block, BlockKind, Permission, validate_agent
from satchel.memory._protocol import MemoryStore
from satchel.memory._template import (
    CORE_CHAR_LIMIT,
    AgentTemplate,
    BlockTemplate,
    default_template,
)

__all__ = [
    "DEFAULT_GLOBAL_LABELS",
    "GLOBAL_TAG",
    "PROJECT_LABEL",
    "PROJECT_TEMPLATE",
    "Project",
    "ensure_project",
    "project_for_root",
    "project_of",
]

logger = logging.getLogger("satchel.memory.projects")

PROJECT_LABEL = "project"
"""The label of the core block a project's agent starts with."""
PROJECT_TEMPLATE = "project"
"""The template name recorded for a project's agent (``satchel memory agents``)."""
GLOBAL_TAG = "global"
"""A block of the person's agent with this tag is shared into every project."""
PROJECT_SHARE = Permission.APPEND
"""The most a project may do to the person's shared blocks: add to them. It never
rewrites, archives or deletes them, so nothing one client was told is lost through
another, and ``human`` stays in every project's context; corrections are made in the
person's own memory (their agent, ``satchel memory``, the console). A block whose own
permission is lower is shared at that."""
DEFAULT_GLOBAL_LABELS: tuple[str, ...] = ("human", "persona")
"""The labels shared into every project by default: who the person is, who you are."""

_AGENT_PREFIX = "project:"
_MAX_AGENT = 128
_PROJECT_DESCRIPTION = (
    "What you know about this project: what it is for, how it is built, tested and run, "
    "its layout and conventions, decisions taken and why, and open work. One short line "
    "per fact; correct a fact that changed. Facts about the person go in 'human' (shared "
    "across all their projects), not here."
)


@dataclass(frozen=True, slots=True)
class Project:
    """One project, as derived from a client's workspace root.

    Attributes:
        key: What identifies the project on every machine: the git remote without
            scheme, user or ``.git`` (``github.com/acme/app``), else the root's
            absolute path.
        agent: The agent namespace holding its memory (``project:`` and the key, with
            ``/`` as ``:``).
        root: The root URI it was derived from (``file:///home/ada/app``).
        remote: The remote URL as the git config has it, without any user or
            password in it; ``None`` without one.
    """

    key: str
    agent: str
    root: str
    remote: str | None = None


def project_for_root(root: str) -> Project:
    """The :class:`Project` of a workspace root (a ``file://`` URI, or a path).

    Raises:
        InvalidInputError: ``root`` is empty, or a URI of a scheme other than
            ``file``.

    Example:
        >>> project_for_root("file:///nowhere/app").agent
        'project:nowhere:app'
    """
    path = _root_path(root)
    remote = _remote_of(path)
    if remote is not None:
        remote = strip_userinfo(remote)  # a token in the remote's URL is no metadata
    key = _normalise_remote(remote) if remote is not None else _path_key(path)
    return Project(key=key, agent=_agent_name(key), root=root, remote=remote)


def _root_path(root: str) -> Path:
    """The normalised path of a root: ``%2e%2e`` and ``..`` resolved lexically, a
    ``file://host/share`` kept as the UNC path ``//host/share``.

    Raises:
        InvalidInputError: Not a ``file://`` URI or an absolute path, or the
            filesystem's root (no project: the person's own memory is used).
    """
    text = root.strip()
    if not text:
        raise InvalidInputError("a workspace root must not be empty")
    if "://" in text:
        parts = urlsplit(text)
        if parts.scheme != "file":
            raise InvalidInputError(f"a workspace root must be a file:// URI, not {text[:200]!r}")
        text = unquote(parts.path)
        host = unquote(parts.netloc)
        if host and host.lower() != "localhost":
            text = f"//{host}/{text.lstrip('/')}"  # a share on another machine
        elif re.match(r"^/[A-Za-z]:/", text):  # file:///C:/code on Windows
            text = text[1:]
    if re.search(r"[\x00-\x1f\x7f]", text):
        raise InvalidInputError("a workspace root must not hold control characters")
    if not (PurePosixPath(text).is_absolute() or PureWindowsPath(text).is_absolute()):
        raise InvalidInputError(f"a workspace root must be an absolute path, not {text[:200]!r}")
    unc = text.startswith("//") and not text.startswith("///")
    text = posixpath.normpath(text.replace("\\", "/") if PureWindowsPath(text).drive else text)
    if unc and not text.startswith("//"):
        text = "/" + text  # normpath keeps a leading // only on some platforms
    if text.strip("/") == "" or re.fullmatch(r"[A-Za-z]:/?", text):
        raise InvalidInputError(
            f"a workspace root must be a project's folder, not the filesystem's root "
            f"{root[:200]!r}: it is no project"
        )
    return Path(text)


def _path_key(path: Path) -> str:
    """The key of a root without a git remote: its path without the one leading
    ``/`` (a UNC path ``//host/share`` keeps the second, so it never meets the local
    ``/host/share``)."""
    text = path.as_posix()
    return text[1:] if text.startswith("/") else text


_UNNAMEABLE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
"""What an agent name may not hold (:func:`~satchel.memory.validate_agent`)."""


def _agent_name(key: str) -> str:
    """``project:`` and the key with ``/`` as ``:``; a ``%`` or ``:`` inside the key is
    escaped first (``%25``, ``%3A``), so two keys never share a name (``p/a/b`` and
    ``p/a:b`` differ) and keys without either keep the names they always had (a
    Windows drive's colon stays too)."""
    drive = re.match(r"^[A-Za-z]:(?=/)", key)  # C:/code keeps the name it had
    head = drive.group(0) if drive else ""
    escaped = head + key[len(head) :].replace("%", "%25").replace(":", "%3A")
    name = _AGENT_PREFIX + _UNNAMEABLE.sub("", escaped).replace("/", ":").strip()
    if len(name) > _MAX_AGENT:
        digest = hashlib.sha256(key.encode()).hexdigest()[:12]
        name = _AGENT_PREFIX + "…" + name[-(_MAX_AGENT - len(_AGENT_PREFIX) - 14) :] + "~" + digest
    return validate_agent(name.rstrip())


# -- git ----------------------------------------------------------------------------

_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')
_URL = re.compile(r"^\s*url\s*=\s*(.+?)\s*$", re.IGNORECASE)


def _remote_of(path: Path) -> str | None:
    """The URL of the ``origin`` remote (else the first remote) of the repository
    holding ``path``; ``None`` when there is none or it cannot be read."""
    config = _git_config(path)
    if config is None:
        return None
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    remotes: dict[str, str] = {}
    section: str | None = None
    for line in text.splitlines():
        head = _SECTION.match(line)
        if head is not None:
            section = head.group(2) if head.group(1).lower() == "remote" else None
            continue
        url = _URL.match(line)
        if section is not None and url is not None:
            remotes.setdefault(section, url.group(1).strip('"'))
    if not remotes:
        return None
    return remotes.get("origin") or next(iter(remotes.values()))


def _git_config(path: Path) -> Path | None:
    if not path.is_absolute():  # C:/code on a POSIX machine: never a folder of this one
        return None
    try:
        here = path.resolve()
    except (OSError, RuntimeError):
        return None
    for folder in (here, *here.parents):
        dot_git = folder / ".git"
        try:
            if dot_git.is_dir():
                return dot_git / "config"
            if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
                return _config_of_gitdir(folder, dot_git.read_text(encoding="utf-8"))
        except OSError:
            return None
    return None


def _config_of_gitdir(folder: Path, pointer: str) -> Path | None:
    if not pointer.startswith("gitdir:"):
        return None
    gitdir = (folder / pointer.removeprefix("gitdir:").strip()).resolve()
    common = gitdir / "commondir"  # a worktree's gitdir points at the main one
    if common.is_file():
        gitdir = (gitdir / common.read_text(encoding="utf-8").strip()).resolve()
    return gitdir / "config"


def _normalise_remote(remote: str) -> str:
    """``git@github.com:Acme/app.git`` and ``https://u@github.com/Acme/app`` both give
    ``github.com/Acme/app``: the same repository has one key however it was cloned."""
    text = remote.strip()
    scp = re.match(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$", text)
    if "://" in text:
        parts = urlsplit(text)
        host = (parts.hostname or "").lower()
        rest = parts.path
    elif scp is not None:
        host, rest = scp.group(1).lower(), scp.group(2)
    else:  # a local path used as a remote
        host, rest = "", text
    rest = rest.strip("/").removesuffix(".git").strip("/")
    # hosts treat owner and repository names case-insensitively: one key per repository
    return f"{host}/{rest.lower()}" if host else rest


# -- the store ------------------------------------------------------------------------


def _project_template(
    base: AgentTemplate, project: Project, global_labels: Collection[str]
) -> AgentTemplate:
    blocks = [b for b in base.blocks if b.label not in global_labels and b.label != PROJECT_LABEL]
    about = BlockTemplate(
        label=PROJECT_LABEL,
        value=f"Project {project.key}, open at {_root_path(project.root)}.\n"[:CORE_CHAR_LIMIT],
        description=_PROJECT_DESCRIPTION,
        char_limit=CORE_CHAR_LIMIT,
        metadata={"project": project.key, "root": project.root, "remote": project.remote},
    )
    return AgentTemplate(name=PROJECT_TEMPLATE, blocks=(about, *blocks))


def _is_global(block: Block, global_labels: Collection[str]) -> bool:
    return block.kind is not BlockKind.ARCHIVAL and (
        block.label in global_labels or GLOBAL_TAG in block.tags
    )


async def ensure_project(
    store: MemoryStore,
    project: Project,
    *,
    person: str = "default",
    template: AgentTemplate | None = None,
    global_labels: Collection[str] = DEFAULT_GLOBAL_LABELS,
) -> list[str]:
    """Set ``project``'s agent up the first time, and share the person's global blocks
    into it (see the module doc). Safe to call on every session: what exists is kept.

    Args:
        store: The memory store.
        project: The project (see :func:`project_for_root`).
        person: The person's own agent, whose global blocks are shared.
        template: The starting blocks of a new agent (``None``: ``persona`` and
            ``human``); its global labels stay with ``person``, and a ``project``
            block is added.
        global_labels: The labels shared into every project (blocks tagged
            ``global`` are shared too).

    Returns:
        The labels shared into the project by this call (empty when all were shared
        before).
    """
    base = default_template() if template is None else template
    await store.ensure_agent(person, base)
    made = await store.ensure_agent(project.agent, _project_template(base, project, global_labels))
    if made:
        logger.info("project memory %r set up for %s", project.agent, project.root)
    shared: list[str] = []
    for block in await store.list_blocks(person):
        if block.agent != person or not _is_global(block, global_labels):
            continue
        level = min(block.permission, PROJECT_SHARE)
        if block.shares.get(project.agent) is level:
            continue
        try:
            await store.share_block(person, block.label, project.agent, level)
        except PermissionDeniedError as exc:  # a read_only block: not even its owner shares
            logger.warning("not sharing %r into %s: %s", block.label, project.agent, exc.message)
            continue
        shared.append(block.label)
    return shared


async def project_of(store: MemoryStore, agent: str) -> Project | None:
    """The :class:`Project` whose memory ``agent`` holds, as recorded when it was set
    up; ``None`` when ``agent`` is no project's namespace."""
    if not agent.startswith(_AGENT_PREFIX):
        return None
    try:
        block = await store.get_block(agent, PROJECT_LABEL)
    except NotFoundError:
        block = None
    meta = {} if block is None or block.agent != agent else dict(block.metadata)
    key = meta.get("project")
    root = meta.get("root")
    remote = meta.get("remote")
    return Project(
        key=key if isinstance(key, str) else agent.removeprefix(_AGENT_PREFIX).replace(":", "/"),
        agent=agent,
        root=root if isinstance(root, str) else "",
        remote=strip_userinfo(remote) if isinstance(remote, str) else None,
    )
