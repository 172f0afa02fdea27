"""What the two SDK-backed models share: importing the optional SDK, reading the key
and base URL from the environment, closing the client, bounding each request in time,
retrying what is worth retrying, and mapping the SDK's errors to
:class:`~satchel.ModelError` (both official SDKs name their errors alike).

Why satchel retries itself (the SDK's ``max_retries`` is 0): the SDK retries every
timeout and every failed connection, and gives each try the whole timeout, so a server
that accepted the connection and never answered took three times 60 seconds and the
backoff (188 s) to fail. Here one request has one budget, ``timeout`` seconds,
retries included; a connection gets :data:`CONNECT_TIMEOUT` seconds of it. Only what
the server asks to have retried (408, 409, 429, 5xx, unless it sends
``x-should-retry: false``) and a connection dropped midway are retried, with backoff
(``Retry-After`` when the server gives one); a refused connection, a timed-out
connection and a silent server fail at once, each with a line that names the server.
"""

from __future__ import annotations

import importlib
import os
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar, Self, TypeVar

import anyio

from satchel._errors import ModelError, SatchelUsageError

__all__ = ["CONNECT_TIMEOUT", "DEFAULT_TIMEOUT", "SdkModel"]

DEFAULT_TIMEOUT = 60.0
"""Seconds a model request may take, retries included, unless ``timeout`` says
otherwise (see :class:`SdkModel`)."""

CONNECT_TIMEOUT = 5.0
"""Seconds to open a connection to the server (at most the request's ``timeout``)."""

_FIRST_DELAY = 0.5
_MAX_DELAY = 8.0
_RETRY_STATUSES = (408, 409, 429)

_T = TypeVar("_T")


class SdkModel:
    """Base of :class:`~satchel.agent.OpenAIModel` and
    :class:`~satchel.agent.AnthropicModel`; a subclass names its package, client class,
    environment variables and default host.

    ``timeout`` bounds one request: a response that is not streamed must be complete
    within it, retries included; a streamed one must start within it, and then no
    pause between two pieces may be longer (a long answer that keeps coming is never
    cut).
    """

    provider: ClassVar[str]
    client_class: ClassVar[str]
    key_env: ClassVar[str]
    url_env: ClassVar[str]
    default_host: ClassVar[str]
    key_hint: ClassVar[str] = "export it"

    def _connect(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        max_retries: int,
        timeout: float,
    ) -> None:
        """Import the SDK and make its async client.

        Raises:
            SatchelUsageError: the SDK is not installed, or ``timeout`` or
                ``max_retries`` is out of range.
            ModelError: no API key.
        """
        if not timeout > 0:
            raise SatchelUsageError(f"timeout must be more than 0 seconds, not {timeout}.")
        if max_retries < 0:
            raise SatchelUsageError(f"max_retries must be 0 or more, not {max_retries}.")
        try:
            self._sdk: Any = importlib.import_module(self.provider)
        except ImportError as exc:
            raise SatchelUsageError(
                f"{self.provider}: models need the {self.provider} package: "
                f"pip install 'satchel[{self.provider}]'."
            ) from exc
        key = api_key or os.environ.get(self.key_env)
        if not key:
            raise ModelError(f"{self.key_env} is not set: {self.key_hint}.", reason="auth")
        self.name = f"{self.provider}:{model}"
        self.model = model
        self.base_url = base_url or os.environ.get(self.url_env) or None
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.connect_timeout = min(CONNECT_TIMEOUT, self.timeout)
        # The SDK's own read timeout is the per-piece bound of a stream; the deadline
        # of the whole request is kept here (_answer), so the SDK retries nothing.
        self._client: Any = getattr(self._sdk, self.client_class)(
            api_key=key,
            base_url=self.base_url,
            max_retries=0,
            timeout=self._sdk.Timeout(self.timeout, connect=self.connect_timeout),
        )

    async def aclose(self) -> None:
        """Close the HTTP connections. Idempotent."""
        await self._client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def _where(self) -> str:
        return self.base_url or self.default_host

    async def _answer(self, send: Callable[[], Awaitable[_T]]) -> _T:
        """``await send()`` within the request's deadline, retried while the server
        asks for it (see the module docstring).

        Raises:
            ModelError: the request failed, or the deadline passed.
        """
        try:
            with anyio.fail_after(self.timeout) as scope:
                for attempt in range(self.max_retries + 1):
                    try:
                        return await send()
                    except self._sdk.APIError as exc:
                        delay = self._retry_delay(exc, attempt)
                        left = scope.deadline - anyio.current_time()
                        if delay is None or delay >= left:
                            raise self._mapped(exc) from exc
                        await anyio.sleep(delay)
        except TimeoutError as exc:
            raise self._timed_out() from exc
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _pieces(self, stream: Any) -> AsyncIterator[Any]:
        """The events of a streamed response, each within the request's ``timeout``
        of the one before; the stream is closed however the iteration ends.

        Raises:
            ModelError: the stream broke off, or went silent for ``timeout`` seconds.
        """
        async with stream:
            events = aiter(stream)
            while True:
                try:
                    with anyio.fail_after(self.timeout):
                        event = await anext(events)
                except StopAsyncIteration:
                    return
                except TimeoutError as exc:
                    raise self._timed_out(midway=True) from exc
                except self._sdk.APIError as exc:
                    raise self._mapped(exc) from exc
                yield event

    def _retry_delay(self, exc: Any, attempt: int) -> float | None:
        """Seconds to wait before trying ``exc``'s request again, or ``None`` when it is
        not worth another try (or the retries are spent)."""
        if attempt >= self.max_retries:
            return None
        sdk = self._sdk
        if isinstance(exc, sdk.APIStatusError):
            response = exc.response
            asked = response.headers.get("x-should-retry")
            if asked == "false":
                return None
            status = response.status_code
            if asked != "true" and status not in _RETRY_STATUSES and status < 500:
                return None
            given = _retry_after(response.headers)
            if given is not None:
                return given
        elif not _dropped(sdk, exc):
            return None
        backoff = min(_FIRST_DELAY * 2**attempt, _MAX_DELAY)
        return backoff * random.uniform(0.75, 1.0)

    def _timed_out(self, *, midway: bool = False) -> ModelError:
        what = "went silent midway through its answer for" if midway else "did not answer within"
        return ModelError(
            f"{self._where} {what} {self.timeout:g} s (a slow model may need a longer --timeout).",
            reason="timeout",
        )

    def _mapped(self, exc: Any) -> ModelError:
        """The :class:`~satchel.ModelError` for one of the SDK's ``APIError``\\ s."""
        sdk = self._sdk
        where = self._where
        if isinstance(exc, sdk.AuthenticationError | sdk.PermissionDeniedError):
            return ModelError(f"{where} refused the API key: {exc.message}", reason="auth")
        if isinstance(exc, sdk.APITimeoutError):
            if type(exc.__cause__).__name__ == "ConnectTimeout":
                return ModelError(
                    f"cannot connect to {where} within {self.connect_timeout:g} s: is the "
                    "server up and reachable, and is --base-url right?",
                    reason="connection",
                )
            return self._timed_out()
        if isinstance(exc, sdk.APIConnectionError):
            hint = " (is the server running, and is --base-url right?)" if _refused(exc) else ""
            return ModelError(f"cannot reach {where}: {_reason(exc)}{hint}", reason="connection")
        if isinstance(exc, sdk.RateLimitError):
            return ModelError(f"{where} kept rate-limiting: {exc.message}", reason="rate_limit")
        too_long = getattr(exc, "code", None) == "context_length_exceeded" or (
            isinstance(exc, sdk.BadRequestError) and "too long" in str(exc.message).lower()
        )
        if too_long:
            return ModelError(
                f"the conversation is longer than {self.model}'s context: {exc.message}",
                reason="context_length",
            )
        if isinstance(exc, sdk.BadRequestError):
            return ModelError(f"{where} refused the request: {exc.message}", reason="bad_request")
        return ModelError(f"{where} failed: {exc}", reason="server")


def _dropped(sdk: Any, exc: BaseException) -> bool:
    """Whether ``exc`` is a connection that was made and then lost (a server closing a
    kept-alive connection, say): worth another try, unlike a refused or timed-out one."""
    return (
        isinstance(exc, sdk.APIConnectionError)
        and not isinstance(exc, sdk.APITimeoutError)
        and not _refused(exc)
    )


def _refused(exc: BaseException) -> bool:
    """Whether ``exc`` is a connection that could not be made (refused, no route, an
    unknown host): trying again at once would fail the same way."""
    return type(exc.__cause__).__name__ == "ConnectError"


def _reason(exc: BaseException) -> str:
    """What went wrong underneath an SDK's connection error, in words: the operating
    system's (``connection refused``) when the chain holds one, else the transport's."""
    seen: BaseException | None = exc.__cause__
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno is not None:
            return os.strerror(seen.errno).lower()
        seen = seen.__cause__ or seen.__context__
    cause = exc.__cause__
    return str(cause) if cause is not None and str(cause) else str(exc)


def _retry_after(headers: Any) -> float | None:
    """The wait a ``Retry-After`` (or ``retry-after-ms``) header asks for, in seconds,
    when it is a number of at most a minute."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if 0 <= seconds <= 60:
            return seconds
    return None
