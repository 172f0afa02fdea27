"""What the two SDK-backed models share: importing the optional SDK, reading the key
and base URL from the environment, closing the client, and mapping the SDK's errors to
:class:`~satchel.ModelError` (both official SDKs name their errors alike)."""

from __future__ import annotations

import importlib
import os
from typing import Any, ClassVar, Self

from satchel._errors import ModelError, SatchelUsageError

__all__ = ["SdkModel"]


class SdkModel:
    """Base of :class:`~satchel.agent.OpenAIModel` and
    :class:`~satchel.agent.AnthropicModel`; a subclass names its package, client class,
    environment variables and default host."""

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
            SatchelUsageError: the SDK is not installed.
            ModelError: no API key.
        """
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
        self._client: Any = getattr(self._sdk, self.client_class)(
            api_key=key, base_url=self.base_url, max_retries=max_retries, timeout=timeout
        )

    async def aclose(self) -> None:
        """Close the HTTP connections. Idempotent."""
        await self._client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _mapped(self, exc: Any) -> ModelError:
        """The :class:`~satchel.ModelError` for one of the SDK's ``APIError``\\ s."""
        sdk = self._sdk
        where = self.base_url or self.default_host
        if isinstance(exc, sdk.AuthenticationError | sdk.PermissionDeniedError):
            return ModelError(f"{where} refused the API key: {exc.message}", reason="auth")
        if isinstance(exc, sdk.APIConnectionError):
            return ModelError(f"cannot reach {where}: {exc}", reason="connection")
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
