"""A local server that speaks OpenAI's embeddings wire format (``POST /v1/embeddings``:
``{"data": [{"object": "embedding", "index": i, "embedding": [...]}], "model",
"usage"}``; errors as ``{"error": {...}}``; 429 with ``retry-after``), so the real
``openai`` SDK can be driven with no network. Its vectors are a hashed bag of words of
a chosen size, so texts sharing words are near and search results can be checked.

Serve it with :func:`agent.fake_openai.serving`.
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Any

import numpy as np
import numpy.typing as npt
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

__all__ = ["FakeEmbeddings", "bag_of_words"]


def bag_of_words(text: str, dim: int) -> npt.NDArray[np.float32]:
    """The server's vector of ``text``: lower-cased words hashed into ``dim`` buckets,
    L2-normalised (deterministic)."""
    out = np.zeros(dim, dtype=np.float32)
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
        out[int.from_bytes(digest, "little") % dim] += 1.0
    norm = float(np.linalg.norm(out))
    if norm == 0:
        out[0], norm = 1.0, 1.0
    return out / norm


class FakeEmbeddings:
    """The app.

    Args:
        dim: The size of every vector.
        model: The only model it serves (another is a 404, as OpenAI's).
        key: The API key it requires (``None``: any or none).
    """

    def __init__(self, *, dim: int = 64, model: str = "fake-embed", key: str | None = None) -> None:
        self.dim, self.model, self.key = dim, model, key
        self.requests: list[dict[str, Any]] = []
        """Every request body answered (not those refused with 429 or a failure)."""
        self.fail_after: int | None = None
        """Answer this many requests, then fail every later one with a 500."""
        self.rate_limits = 0
        """Refuse the next this many requests with a 429 and ``retry-after: 0``."""
        self.limited = 0
        """How many requests were refused with a 429."""
        self._lock = threading.Lock()
        self.app = Starlette(routes=[Route("/v1/embeddings", self._embeddings, methods=["POST"])])

    async def _embeddings(self, request: Request) -> Response:
        if self.key is not None and request.headers.get("authorization") != f"Bearer {self.key}":
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        body = await request.json()
        with self._lock:
            if self.rate_limits > 0:
                self.rate_limits -= 1
                self.limited += 1
                response = _error(429, "Rate limit reached; try again.", "rate_limit_exceeded")
                response.headers["retry-after"] = "0"
                return response
            if self.fail_after is not None and len(self.requests) >= self.fail_after:
                return _error(500, "The server had an error.", None, "server_error")
            if body.get("model") != self.model:
                return _error(404, f"The model `{body.get('model')}` does not exist.", None)
            self.requests.append(body)
        texts = body["input"]
        if isinstance(texts, str):
            texts = [texts]
        size = int(body.get("dimensions") or self.dim)
        data = [
            {"object": "embedding", "index": i, "embedding": bag_of_words(t, size).tolist()}
            for i, t in enumerate(texts)
        ]
        tokens = sum(len(t.split()) for t in texts)
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": self.model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    @property
    def texts_embedded(self) -> int:
        """How many texts it embedded."""
        return sum(len(body["input"]) for body in self.requests)


def _error(
    status: int, message: str, code: str | None, kind: str = "invalid_request_error"
) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "type": kind, "param": None, "code": code}},
        status_code=status,
    )
