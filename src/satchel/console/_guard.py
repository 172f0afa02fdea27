"""Who may use the console, and proof that a write came from its own pages.

* **Token.** With a token (``satchel console --token``, or ``satchel serve --http
  --token``), every page but the login page needs either ``Authorization: Bearer
  <token>`` or the session cookie the login page sets. The cookie holds an HMAC of the
  token, never the token; it is ``HttpOnly`` and ``SameSite=Strict``, so no script
  reads it and no other site's page sends it.
* **Loopback without a token.** Then anyone on this machine may use the console, but
  only under a loopback ``Host`` (a web page that rebinds its own name to 127.0.0.1
  is refused) and, for writes, a same-origin ``Origin`` when the browser sends one.
* **CSRF.** Every write is a POST carrying a CSRF token (a form field or an
  ``X-CSRF-Token`` header). The token is an HMAC, under a secret made when the app
  starts, of the session: a page of another site cannot read it, so it cannot forge
  a write.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from dataclasses import dataclass, field

from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request

__all__ = ["COOKIE", "CSRF_FIELD", "CSRF_HEADER", "Guard"]

COOKIE = "satchel_console"
"""The name of the session cookie the login page sets."""
CSRF_FIELD = "csrf"
"""The form field every write carries its CSRF token in."""
CSRF_HEADER = "x-csrf-token"
"""The header htmx requests carry the CSRF token in."""

_ANONYMOUS = "loopback"


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
    """The console's authentication and CSRF checks.

    Args:
        token: The operator's token; ``None`` to serve loopback clients without one.
        secret: Signs CSRF tokens (random per app by default).
    """

    token: str | None = None
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))

    def _mac(self, key: bytes, text: str) -> str:
        return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()

    @property
    def session_value(self) -> str:
        """What the session cookie holds: an HMAC of the token (never the token)."""
        if self.token is None:
            return _ANONYMOUS
        return self._mac(self.token.encode(), "satchel-console-session")

    def token_matches(self, candidate: str) -> bool:
        """Whether ``candidate`` is the operator's token (constant time)."""
        return self.token is not None and hmac.compare_digest(
            candidate.strip().encode(), self.token.encode()
        )

    def authenticated(self, request: Request) -> bool:
        """Whether ``request`` comes from the operator: the bearer token or the session
        cookie when a token is set; a loopback ``Host`` otherwise."""
        if self.token is None:
            return _loopback_host(request.headers.get("host", ""))
        scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self.token_matches(credentials):
            return True
        cookie = request.cookies.get(COOKIE, "")
        return hmac.compare_digest(cookie.encode(), self.session_value.encode())

    def csrf_token(self) -> str:
        """The CSRF token the console's pages embed in every form."""
        return self._mac(self.secret, self.session_value)

    def check_write(self, request: Request, form: FormData) -> None:
        """Refuse a write without the page's CSRF token or from another origin.

        Raises:
            HTTPException: 403, with the reason.
        """
        given = request.headers.get(CSRF_HEADER) or form.get(CSRF_FIELD)
        if not isinstance(given, str) or not hmac.compare_digest(
            given.encode(), self.csrf_token().encode()
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
