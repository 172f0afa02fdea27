"""Calling a mounted server's tool, and how the failures of a mount read.

:func:`call_remote` forwards one call over the live connection and never raises for
the remote's or the connection's failure: a call past ``call_timeout`` (or one the
server timed out) is a ``timeout`` result; a JSON-RPC error, a closed connection or a
broken transport is a ``failed`` result carrying a :class:`~satchel.RemoteToolError`
message, and a lost connection is marked so that the next call reconnects. A
successful answer becomes a :class:`~satchel.ToolResult` through
:func:`~satchel.mcp.mount._remote.remote_result`.

:func:`describe` is the one-line text of any failure, in logs and messages alike.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, cast

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from satchel._errors import RemoteToolError, SatchelError, SatchelUsageError
from satchel._redact import redact_urls
from satchel.mcp.mount._remote import remote_result
from satchel.tools import ErrorInfo, ToolResult, result_from_exception

if TYPE_CHECKING:
    from satchel.mcp.mount._connection import Connection, Live

__all__ = ["call_remote", "describe", "find_usage_error"]


def find_usage_error(exc: BaseException) -> SatchelUsageError | None:
    """The developer's mistake inside ``exc`` (task groups wrap it), if any."""
    if isinstance(exc, SatchelUsageError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        group = cast(BaseExceptionGroup[BaseException], exc)
        for inner in group.exceptions:
            found = find_usage_error(inner)
            if found is not None:
                return found
    return None


def describe(exc: BaseException) -> str:
    """``exc`` in one line: a satchel error's message, or the type and text of another
    (every one of a group, joined by ``;``)."""
    if isinstance(exc, BaseExceptionGroup):
        group = cast(BaseExceptionGroup[BaseException], exc)
        return "; ".join(describe(e) for e in group.exceptions)
    if isinstance(exc, SatchelError):
        return exc.message
    text = redact_urls(str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def call_remote(
    connection: Connection, remote: str, args: dict[str, Any], name: str
) -> ToolResult:
    """Call the remote tool ``remote`` with ``args``, reporting it as the tool ``name``."""
    mount = connection.mount
    if connection.thread is not None and threading.get_ident() != connection.thread:
        return result_from_exception(
            name,
            RemoteToolError(
                f"Mounted tools of {mount!r} must be called from the event loop that mounted them."
            ),
        )
    try:
        live = await connection.current()
    except RemoteToolError as exc:
        return result_from_exception(name, exc)
    try:
        with anyio.fail_after(mount.call_timeout):
            result = await live.client.call_tool(remote, args)
    except TimeoutError:
        return ToolResult(
            name,
            error=ErrorInfo(
                "timeout",
                f"The MCP server {mount.prefix!r} did not finish {remote!r} within "
                f"{mount.call_timeout:g} s. Try again later.",
                {"prefix": mount.prefix, "tool": remote},
            ),
        )
    except MCPError as exc:
        return _call_error(connection, name, remote, live, exc)
    except Exception as exc:  # the boundary: transport failures become results
        connection.lose(live)
        return result_from_exception(
            name,
            RemoteToolError(
                f"The connection to the MCP server {mount.prefix!r} failed while running "
                f"{remote!r} ({describe(exc)}); it is reconnected on the next call.",
                details={"prefix": mount.prefix, "tool": remote},
            ),
        )
    return remote_result(name, result)


def _call_error(
    connection: Connection, name: str, remote: str, live: Live, exc: MCPError
) -> ToolResult:
    prefix = connection.mount.prefix
    details = {"prefix": prefix, "tool": remote, "code": exc.code}
    if exc.code == types.CONNECTION_CLOSED or live.lost.is_set():
        connection.lose(live)
        message = (
            f"The MCP server {prefix!r} closed the connection while running "
            f"{remote!r} (it may have crashed); it is restarted on the next call."
        )
    elif exc.code == types.REQUEST_TIMEOUT:
        return ToolResult(
            name,
            error=ErrorInfo(
                "timeout", f"The MCP server {prefix!r} timed out on {remote!r}.", details
            ),
        )
    else:
        message = (
            f"The MCP server {prefix!r} refused the call to {remote!r}: "
            f"{exc.message} (JSON-RPC error {exc.code})."
        )
    return result_from_exception(name, RemoteToolError(message, details=details))
