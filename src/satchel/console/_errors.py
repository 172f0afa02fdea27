"""satchel's errors as HTTP statuses, and the error pages the console shows for them.

Every refusal the store or the broker raises is a :class:`~satchel.SatchelError`; the
console maps its class to a status (a missing block is 404, a lost race 409, a limit
422, a refused permission 403, a failed database 503) and shows its message and
details on a page, never a traceback.
"""

from __future__ import annotations

import logging

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from satchel._errors import (
    AlreadyExistsError,
    ApprovalError,
    CharLimitError,
    ConsentRequiredError,
    InvalidInputError,
    NotFoundError,
    PermissionDeniedError,
    SatchelError,
    SatchelUsageError,
    StorageError,
    VersionConflictError,
)
from satchel.console._render import Renderer

__all__ = ["error_handlers", "status_of"]

logger = logging.getLogger("satchel.console")

_STATUS: tuple[tuple[type[SatchelError], int], ...] = (
    (NotFoundError, 404),
    (AlreadyExistsError, 409),
    (VersionConflictError, 409),
    (ApprovalError, 409),
    (CharLimitError, 422),
    (InvalidInputError, 422),
    (PermissionDeniedError, 403),
    (ConsentRequiredError, 403),
    (SatchelUsageError, 400),
    (StorageError, 503),
)


def status_of(error: SatchelError) -> int:
    """The HTTP status of ``error`` (500 for a kind the console does not expect)."""
    for kind, status in _STATUS:
        if isinstance(error, kind):
            return status
    return 500


def error_handlers(renderer: Renderer) -> dict[type[Exception] | int, object]:
    """Starlette exception handlers rendering satchel's errors and HTTP errors as
    pages."""

    async def satchel_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, SatchelError)
        status = status_of(exc)
        if status == 500:
            logger.error("the console failed on %s: %s", request.url.path, exc.message)
        context = {
            "status": status,
            "title": type(exc).__name__,
            "message": exc.message,
            "details": dict(exc.details),
        }
        return renderer.render(request, "error.html", context, status=status)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        titles = {401: "Login needed", 403: "Refused", 404: "Not found", 405: "Not allowed"}
        context: dict[str, object] = {
            "status": exc.status_code,
            "title": titles.get(exc.status_code, "Error"),
            "message": exc.detail,
            "details": {},
        }
        response = renderer.render(request, "error.html", context, status=exc.status_code)
        if exc.headers:
            response.headers.update(exc.headers)
        return response

    return {SatchelError: satchel_error, HTTPException: http_error}
