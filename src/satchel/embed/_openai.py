"""Embeddings from a provider: any server that speaks OpenAI's embeddings API.

:class:`OpenAIEmbedder` sends texts to ``POST /v1/embeddings`` through the official
``openai`` SDK (the ``satchel[openai]`` extra): OpenAI itself, or Ollama, LM Studio,
vLLM, llama.cpp and any other OpenAI-compatible server by ``base_url``. The SDK retries
what the server asks to have retried (429 and 5xx, honouring ``Retry-After``) with
backoff; satchel only splits a long list of texts into requests of at most
``batch_size`` inputs and maps the SDK's errors to :class:`~satchel.EmbeddingError`
with one line that names the server.

The number of dimensions is known for OpenAI's own models (or given as
``dimensions``); for any other model the first use of :attr:`OpenAIEmbedder.dim` asks
the server once (:meth:`OpenAIEmbedder.load`; :meth:`OpenAIEmbedder.probe` from async
code).
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, Final, cast

import anyio.to_thread
import numpy as np
import numpy.typing as npt

from satchel._errors import EmbeddingError, SatchelUsageError

__all__ = ["KNOWN_DIMENSIONS", "OpenAIEmbedder", "openai_embedder"]

logger = logging.getLogger("satchel.embed")

KNOWN_DIMENSIONS: Final[dict[str, int]] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
"""The vector size of OpenAI's own embedding models (others are asked of the server)."""

KEY_ENVS: Final = ("SATCHEL_EMBED_API_KEY", "OPENAI_API_KEY")
"""Where the API key is read from when none is given, first found wins."""

_NO_KEY: Final = "no-key"
"""Sent to a server given by ``base_url`` when no key is set: local servers (Ollama, LM
Studio, llama.cpp) need none, and the SDK refuses an empty one."""


class OpenAIEmbedder:
    """An :class:`~satchel.embed.Embedder` backed by an OpenAI-compatible embeddings API.

    Thread-safe (the SDK's client is); satchel calls :meth:`embed` from worker threads.

    Args:
        model: The provider's model name (``text-embedding-3-small``,
            ``nomic-embed-text``, ...).
        base_url: An OpenAI-compatible server (``http://localhost:11434/v1`` for Ollama);
            ``None`` for OpenAI's own.
        api_key: The key; ``None`` reads ``SATCHEL_EMBED_API_KEY``, then
            ``OPENAI_API_KEY``. A server given by ``base_url`` may need none.
        dimensions: Ask for vectors of this size (OpenAI's ``text-embedding-3-*``
            models can shorten theirs); ``None`` for the model's own size.
        batch_size: At most this many texts per request (OpenAI accepts 2048).
        timeout: Seconds one request may take.
        max_retries: How often the SDK retries a request the server asks to have
            retried (429, 5xx) or a dropped connection, with backoff.
        query_timeout: Seconds a memory search waits for its query's vector (retries
            included) before it goes on by keywords only, with a warning.

    Raises:
        SatchelUsageError: The ``openai`` package is not installed, or no API key for
            OpenAI's own server.

    Example:
        >>> embedder = OpenAIEmbedder("nomic-embed-text", base_url="http://localhost:11434/v1")
        >>> store = await SQLiteStore.open("memory.db", embedder=embedder)  # doctest: +SKIP
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 256,
        timeout: float = 30.0,
        max_retries: int = 2,
        query_timeout: float = 10.0,
    ) -> None:
        if not model.strip():
            raise SatchelUsageError("openai: an embedding model name is needed (openai:MODEL).")
        if dimensions is not None and dimensions < 1:
            raise SatchelUsageError(f"dimensions must be 1 or more, not {dimensions}.")
        if batch_size < 1:
            raise SatchelUsageError(f"batch_size must be 1 or more, not {batch_size}.")
        sdk = _import_sdk()
        key = api_key or next((os.environ[k] for k in KEY_ENVS if os.environ.get(k)), None)
        if key is None:
            if base_url is None:
                raise SatchelUsageError(
                    "openai: embeddings need an API key: set SATCHEL_EMBED_API_KEY or "
                    "OPENAI_API_KEY (or give a base URL of a server that needs none)."
                )
            key = _NO_KEY
        self.model = model
        self.base_url = base_url
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.query_timeout = query_timeout
        """Seconds a memory search waits for its query's vector."""
        self._sdk: Any = sdk
        self._client: Any = sdk.OpenAI(
            api_key=key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )
        self._dim: int | None = dimensions or KNOWN_DIMENSIONS.get(model)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
            f"dimensions={self.dimensions!r})"
        )

    @property
    def name(self) -> str:
        """``openai:MODEL``: the model's identifier (stored beside its vectors)."""
        return f"openai:{self.model}"

    @property
    def where(self) -> str:
        """The server, for messages: the base URL, or OpenAI's."""
        return self.base_url or "api.openai.com"

    @property
    def dim(self) -> int:
        """The number of dimensions of every vector; asked of the server on first use
        when neither the model nor ``dimensions`` says (blocking; see :meth:`probe`).

        Raises:
            EmbeddingError: The server could not be asked.
        """
        if self._dim is None:
            self.load()
        assert self._dim is not None
        return self._dim

    @property
    def loaded(self) -> bool:
        """Whether the vector size is known (nothing else needs loading)."""
        return self._dim is not None

    def load(self, progress: Callable[[str], None] | None = None) -> None:
        """Learn the vector size from the server now, if it is not known (one request).

        Raises:
            EmbeddingError: The server could not be asked.
        """
        with self._lock:
            if self._dim is not None:
                return
            if progress is not None:
                progress(f"asking {self.where} for the size of {self.model}'s vectors")
            self._dim = int(self._request(["satchel"]).shape[1])

    async def probe(self) -> int:
        """:attr:`dim`, asked of the server in a worker thread when unknown: call it
        before opening a store from async code.

        Raises:
            EmbeddingError: The server could not be asked.
        """
        await anyio.to_thread.run_sync(self.load)
        return self.dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` (one request per ``batch_size`` of them), in order, each row
        L2-normalised.

        Raises:
            EmbeddingError: The server failed (after the SDK's retries), or answered
                with vectors of another size.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        chunks = [
            self._request(texts[start : start + self.batch_size])
            for start in range(0, len(texts), self.batch_size)
        ]
        vectors = np.concatenate(chunks) if len(chunks) > 1 else chunks[0]
        if self._dim is None:  # the first answer tells the size: no request to ask it
            with self._lock:
                if self._dim is None:
                    self._dim = int(vectors.shape[1])
        if vectors.shape[1] != self._dim:
            raise EmbeddingError(
                f"{self.where} returned vectors of {vectors.shape[1]} dimensions for "
                f"{self.model}, expected {self._dim}"
            )
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return np.ascontiguousarray(vectors / norms, dtype=np.float32)

    def close(self) -> None:
        """Close the HTTP connections. Idempotent."""
        self._client.close()

    def _request(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One request's vectors, in the order of ``texts``."""
        options: dict[str, Any] = {"model": self.model, "input": [t or " " for t in texts]}
        if self.dimensions is not None:
            options["dimensions"] = self.dimensions
        options["encoding_format"] = "float"
        try:
            response = self._client.embeddings.create(**options)
        except self._sdk.APIError as exc:
            raise _mapped(self._sdk, exc, self.where) from exc
        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(texts):
            raise EmbeddingError(
                f"{self.where} returned {len(data)} vectors for {len(texts)} texts"
            )
        try:
            return np.asarray([item.embedding for item in data], dtype=np.float32)
        except ValueError as exc:  # ragged rows
            raise EmbeddingError(f"{self.where} returned vectors of differing sizes") from exc


def openai_embedder(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    dimensions: int | None = None,
) -> OpenAIEmbedder:
    """An embedder for ``model`` on OpenAI, or on any OpenAI-compatible server at
    ``base_url`` (see :class:`OpenAIEmbedder`).

    Example:
        >>> embedder = openai_embedder("text-embedding-3-small")  # OPENAI_API_KEY
        >>> local = openai_embedder("nomic-embed-text", base_url="http://localhost:11434/v1")
    """
    return OpenAIEmbedder(model, base_url=base_url, api_key=api_key, dimensions=dimensions)


def _import_sdk() -> Any:
    try:
        return importlib.import_module("openai")
    except ImportError as exc:
        raise SatchelUsageError(
            "openai: embedders need the openai package: pip install 'satchel[openai]'."
        ) from exc


def _detail(exc: Any) -> str:
    """What the server said, from its ``{"error": {"message": ...}}`` body when it sent
    one (the SDK's own message starts with "Error code: ...")."""
    body: object = getattr(exc, "body", None)
    if isinstance(body, dict):
        fields = cast(dict[str, object], body)
        inner = fields.get("error", fields)
        if isinstance(inner, dict):
            message = cast(dict[str, object], inner).get("message")
            if isinstance(message, str) and message:
                return message
    return str(getattr(exc, "message", exc))


def _mapped(sdk: Any, exc: Any, where: str) -> EmbeddingError:
    """One line for one of the SDK's errors, naming the server."""
    if isinstance(exc, sdk.AuthenticationError | sdk.PermissionDeniedError):
        return EmbeddingError(f"{where} refused the API key: {_detail(exc)}")
    if isinstance(exc, sdk.APITimeoutError):
        return EmbeddingError(f"{where} did not answer in time")
    if isinstance(exc, sdk.APIConnectionError):
        return EmbeddingError(f"cannot reach {where}: is the server running, and the URL right?")
    if isinstance(exc, sdk.RateLimitError):
        return EmbeddingError(f"{where} kept rate-limiting: {_detail(exc)}")
    if isinstance(exc, sdk.NotFoundError):
        return EmbeddingError(f"{where}: {_detail(exc)} (is the model name right?)")
    if isinstance(exc, sdk.APIStatusError):
        return EmbeddingError(f"{where} failed ({exc.status_code}): {_detail(exc)}")
    return EmbeddingError(f"{where} failed: {exc}")
