"""Parsing ``satchel serve``'s address and mount options: ``--http HOST:PORT``,
``--mount PREFIX=COMMAND|URL`` and ``--mount-header PREFIX:NAME=VALUE``."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import replace

import typer

from satchel.serve import MountSpec

__all__ = ["MountSpec", "attach_headers", "parse_http", "parse_mount", "parse_mount_header"]


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (or ``PORT``, or ``[::1]:PORT``) as ``(host, port)``.

    Raises:
        typer.BadParameter: not of that form, or the port is not 0-65535.
    """
    host, sep, port_text = value.rpartition(":")
    if not sep:
        host, port_text = "127.0.0.1", value
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise typer.BadParameter(
            f"{value!r} is not HOST:PORT (e.g. 127.0.0.1:8765; port 0 picks a free one).",
            param_hint="'--http'",
        )
    return host, port


def parse_mount(value: str) -> MountSpec:
    """``PREFIX=COMMAND ARGS...`` (a stdio server) or ``PREFIX=URL`` (streamable HTTP).

    Raises:
        typer.BadParameter: no ``=``, an empty prefix, or nothing after it.
    """
    prefix, sep, target = value.partition("=")
    prefix, target = prefix.strip(), target.strip()
    if not sep or not prefix or not target:
        raise typer.BadParameter(
            f"{value!r} is not PREFIX=COMMAND or PREFIX=URL "
            "(e.g. 'git=uvx mcp-server-git' or 'docs=http://127.0.0.1:9000/mcp').",
            param_hint="'--mount'",
        )
    if target.startswith(("http://", "https://")):
        return MountSpec(prefix=prefix, url=target)
    try:
        words = shlex.split(target)
    except ValueError as exc:
        raise typer.BadParameter(
            f"cannot split {target!r}: {exc}.", param_hint="'--mount'"
        ) from exc
    return MountSpec(prefix=prefix, command=words[0], args=tuple(words[1:]))


_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def parse_mount_header(value: str, environ: Mapping[str, str]) -> tuple[str, str, str]:
    """``PREFIX:Name=VALUE`` as ``(prefix, name, value)``; ``${VAR}`` in the value is
    replaced by that environment variable, so a secret need not sit in the command line
    or in an MCP client's JSON.

    Raises:
        typer.BadParameter: not of that form, an invalid header name, or an unset
            variable.
    """
    hint = "'--mount-header'"
    prefix, _, rest = value.partition(":")
    name, sep, raw = rest.partition("=")
    prefix, name = prefix.strip(), name.strip()
    if not sep or not prefix or not name:
        raise typer.BadParameter(
            f"{value!r} is not PREFIX:NAME=VALUE "
            "(e.g. 'docs:Authorization=Bearer ${DOCS_TOKEN}').",
            param_hint=hint,
        )
    if not _HEADER_NAME.fullmatch(name):
        raise typer.BadParameter(f"{name!r} is not a valid HTTP header name.", param_hint=hint)
    missing = [v for v in _ENV_REFERENCE.findall(raw) if v not in environ]
    if missing:
        raise typer.BadParameter(
            f"the environment variable {missing[0]} named in the value of {name!r} is not set.",
            param_hint=hint,
        )
    header_value = _ENV_REFERENCE.sub(lambda m: environ[m.group(1)], raw).strip()
    if any(c in header_value for c in "\r\n\0"):
        raise typer.BadParameter(
            f"the value of {name!r} holds a line break or NUL.", param_hint=hint
        )
    return prefix, name, header_value


def attach_headers(
    mounts: Sequence[MountSpec], headers: Sequence[str], environ: Mapping[str, str]
) -> tuple[MountSpec, ...]:
    """``mounts`` with each ``--mount-header`` attached to the URL mount of its prefix.

    Raises:
        typer.BadParameter: a header names a prefix with no ``--mount``, or a stdio one.
    """
    by_prefix = {spec.prefix: spec for spec in mounts}
    extra: dict[str, list[tuple[str, str]]] = {}
    for value in headers:
        prefix, name, header_value = parse_mount_header(value, environ)
        spec = by_prefix.get(prefix)
        if spec is None or spec.url is None:
            what = "no --mount" if spec is None else "a stdio --mount (headers are for URLs)"
            raise typer.BadParameter(
                f"the prefix {prefix!r} has {what}.", param_hint="'--mount-header'"
            )
        extra.setdefault(prefix, []).append((name, header_value))
    return tuple(
        replace(spec, headers=spec.headers + tuple(extra.get(spec.prefix, ()))) for spec in mounts
    )
