"""Deprecated: what ``satchel serve`` builds and runs is the public :mod:`satchel.serve`
now (issue 29, item 4); the option parsers are :mod:`satchel.cli._serve_args`'s.

Importing this module warns; its names stay until the next minor release.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

from satchel.cli._serve_args import (
    attach_headers,
    parse_http,
    parse_mount,
    parse_mount_header,
)
from satchel.serve import (
    AUTO_AGENT,
    MountSpec,
    ServeOptions,
    add_chains,
    build_catalog,
    memory_tools,
    served_registry,
)
from satchel.serve import run_serve as _run_serve

__all__ = [
    "AUTO_AGENT",
    "MountSpec",
    "ServeOptions",
    "add_chains",
    "attach_headers",
    "build_catalog",
    "memory_tools",
    "parse_http",
    "parse_mount",
    "parse_mount_header",
    "run_serve",
    "served_registry",
]

warnings.warn(
    "satchel.cli._serve is deprecated; import ServeOptions, run_serve, build_catalog and "
    "served_registry from satchel.serve",
    DeprecationWarning,
    stacklevel=2,
)


async def run_serve(
    options: ServeOptions, http: tuple[str, int] | None = None, token: str | None = None
) -> None:
    """Deprecated: :func:`satchel.serve.run_serve` with ``http`` and ``token`` in the
    options (``ServeOptions(http=..., token=...)``)."""
    await _run_serve(replace(options, http=http, token=token))
