"""Rendering the console's pages: Jinja2 templates shipped in the package, with
autoescaping on for every template (memory holds text a model wrote, so every stored
value is hostile until escaped), and the headers every page carries.

The Content-Security-Policy allows scripts and styles from the console itself only (no
inline script, no ``eval``), so even a value that escaped escaping could not run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.requests import Request
from starlette.responses import HTMLResponse

from satchel.console._guard import Guard

__all__ = ["SECURITY_HEADERS", "Renderer"]

SECURITY_HEADERS: Mapping[str, str] = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}
"""Headers on every page the console serves."""


def _when(value: datetime | None) -> str:
    if value is None:
        return "–"
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


class Renderer:
    """Renders the console's templates for a request.

    Args:
        guard: Gives each page its CSRF token and login state.
    """

    def __init__(self, guard: Guard) -> None:
        self.guard = guard
        self.env = Environment(
            loader=PackageLoader("satchel.console", "templates"),
            autoescape=True,  # every template, whatever its file name
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["when"] = _when
        self.env.filters["pretty"] = _pretty

    def base(self, request: Request) -> str:
        """The path the console is mounted at (``""`` at the root)."""
        return str(request.scope.get("root_path", "")).rstrip("/")

    def render(
        self,
        request: Request,
        template: str,
        context: Mapping[str, Any] | None = None,
        *,
        status: int = 200,
    ) -> HTMLResponse:
        """``template`` rendered with ``context`` plus ``base``, ``csrf`` and ``login``."""
        values = {
            "base": self.base(request),
            "csrf": self.guard.csrf_token(request),
            "login": self.guard.token is not None,
            "request_path": request.url.path,
        }
        values.update(context or {})
        body = self.env.get_template(template).render(values)
        return HTMLResponse(body, status_code=status, headers=dict(SECURITY_HEADERS))

    def error(self, request: Request, status: int, title: str, message: str) -> HTMLResponse:
        """The error page with ``status``, a short ``title`` and one ``message``."""
        context: dict[str, object] = {
            "status": status,
            "title": title,
            "message": message,
            "details": {},
        }
        return self.render(request, "error.html", context, status=status)
