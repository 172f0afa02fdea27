"""Who may use the console, and proof that a write came from its own pages.

* **Token.** With a token (``satchel console --token``, or ``satchel serve --http
  --token``), every page but the login page needs either ``Authorization: Bearer
  <token>`` or the session cookie the login page sets. The cookie holds a random
  session id (``secrets.token_urlsafe``), never the token nor anything made from it;
  it is ``HttpOnly`` and ``SameSite=Strict``, so no script reads it and no other
  site's page sends it.
* **Sessions.** Each login starts a session kept in this process's memory with an
  expiry (:data:`SESSION_SECONDS`). Logging out ends it; a restart ends them all (the
  table is gone), and so does a change of the token (each session remembers which
  token it was opened with). An old cookie is then refused like no cookie.
* **Loopback without a token.** Then anyone on this machine may use the console, but
  only under a loopback ``Host`` (a web page that rebinds its own name to 127.0.0.1
  is refused) and, for writes, a same-origin ``Origin`` when the browser sends one.
* **CSRF.** Every write is a POST carrying a CSRF token (a form field or an
  ``X-CSRF-Token`` header). The token is an HMAC, under a secret made when the app
  starts, of the session id (or, for a bearer or loopback client, of a fixed name): a
  page of another site cannot read it, so it cannot forge a write, and a session's
  token dies with it.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import secrets
import threading
import time
import warnings
from dataclasses import dataclass, field

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request

__all__ = ["COOKIE", "CSRF_FIELD", "CSRF_HEADER", "MAX_SESSIONS", "SESSION_SECONDS", "Guard"]

logger = logging.getLogger("satchel.console")

COOKIE = "satchel_console"
"""The name of the session cookie the login page sets."""
CSRF_FIELD = "csrf"
"""The form field every write carries its CSRF token in."""
CSRF_HEADER = "x-csrf-token"
"""The header htmx requests carry the CSRF token in."""

SESSION_SECONDS = 12 * 3600
"""How long a login lasts: its session ends this many seconds after the login."""
MAX_SESSIONS = 1000
"""Sessions kept at most; a login past it ends the oldest one."""

_ANONYMOUS = "loopback"
_BEARER = "bearer"


def _loopback_host(host_header: str) -> bool:
    host = host_header.strip().lower()
    if host.startswith("["):
        host = host[1:].partition("]")[0]
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(kw_only=True)
class Guard:
    """The console's authentication, sessions and CSRF checks.

    Args:
        token: The operator's token; ``None`` to serve loopback clients without one.
        secret: Signs CSRF tokens (random per app by default).
        session_seconds: How long a login's session lasts.
    """

    token: str | None = None
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    session_seconds: float = SESSION_SECONDS
    # session id -> (when it ends, on time.monotonic(); the token it was opened with,
    # as an HMAC under ``secret``)
    _sessions: dict[str, tuple[float, str]] = field(
        init=False, repr=False, default_factory=dict[str, tuple[float, str]]
    )
    _lock: threading.Lock = field(init=False, repr=False, default_factory=threading.Lock)

    def _mac(self, key: bytes, text: str) -> str:
        return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()

    def _token_mark(self) -> str:
        return "" if self.token is None else self._mac(self.secret, "token:" + self.token)

    @property
    def session_value(self) -> str:
        """Deprecated: the cookie no longer derives from the token (it holds a random
        session id from :meth:`start_session`). Returns a value no request
        authenticates with."""
        warnings.warn(
            "Guard.session_value is deprecated: console sessions are random ids from "
            "Guard.start_session(), revoked by Guard.end_session()",
            DeprecationWarning,
            stacklevel=2,
        )
        return _ANONYMOUS if self.token is None else ""

    def token_matches(self, candidate: str) -> bool:
        """Whether ``candidate`` is the operator's token (constant time)."""
        return self.token is not None and hmac.compare_digest(
            candidate.strip().encode(), self.token.encode()
        )

    def start_session(self) -> str:
        """Open a session for an operator who just gave the token; returns its id,
        which the login page puts in the cookie."""
        session = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._lock:
            for old in [s for s, (end, _) in self._sessions.items() if end <= now]:
                del self._sessions[old]
            while len(self._sessions) >= MAX_SESSIONS:
                del self._sessions[next(iter(self._sessions))]  # the oldest
            self._sessions[session] = (now + self.session_seconds, self._token_mark())
        return session

    def session_of(self, request: Request) -> str | None:
        """The live session ``request``'s cookie names, or ``None``: no cookie, an
        unknown id (logged out, or from before a restart), an expired one, or one
        opened with another token."""
        cookie = request.cookies.get(COOKIE, "")
        if not cookie or self.token is None:
            return None
        with self._lock:
            found = self._sessions.get(cookie)
            if found is None:
                return None
            end, mark = found
            if end <= time.monotonic() or not hmac.compare_digest(mark, self._token_mark()):
                del self._sessions[cookie]
                return None
        return cookie

    def end_session(self, request: Request) -> bool:
        """End the session ``request``'s cookie names (logout); returns whether there
        was one."""
        cookie = request.cookies.get(COOKIE, "")
        with self._lock:
            ended = self._sessions.pop(cookie, None) is not None
        if ended:
            logger.info("console session ended by logout")
        return ended

    def authenticated(self, request: Request) -> bool:
        """Whether ``request`` comes from the operator: the bearer token or a live
        session cookie when a token is set; a loopback ``Host`` otherwise."""
        if self.token is None:
            return _loopback_host(request.headers.get("host", ""))
        scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self.token_matches(credentials):
            return True
        return self.session_of(request) is not None

    def csrf_token(self, request: Request | None = None) -> str:
        """The CSRF token the console's pages embed in every form: bound to
        ``request``'s session when it has one, else to the bearer or loopback client."""
        if self.token is None:
            return self._mac(self.secret, _ANONYMOUS)
        session = self.session_of(request) if request is not None else None
        return self._mac(self.secret, _BEARER if session is None else "session:" + session)

    def check_write(self, request: Request, form: FormData) -> None:
        """Refuse a write without the page's CSRF token or from another origin.

        Raises:
            HTTPException: 403, with the reason.
        """
        given = request.headers.get(CSRF_HEADER) or form.get(CSRF_FIELD)
        if not isinstance(given, str) or not hmac.compare_digest(
            given.encode(), self.csrf_token(request).encode()
        ):
            raise HTTPException(
                403,
                "This write carries no valid CSRF token: reload the page and try again.",
            )
        origin = request.headers.get("origin")
        if origin is not None:
            expected = f"{request.url.scheme}://{request.headers.get('host', '')}"
            if origin != expected:
                raise HTTPException(403, f"A write from another origin ({origin}) is refused.")
