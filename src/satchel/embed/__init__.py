"""Local text embeddings for satchel's hybrid search: no torch, no network.

:class:`Embedder` is what satchel needs from any embedding model; bring your own by
implementing it. :class:`MiniLMEmbedder` is the bundled one: all-MiniLM-L6-v2 as int8
ONNX on onnxruntime, 384 dimensions, loaded on first use. :func:`default_embedder`
hands out one shared instance per process, and :func:`embed_async` runs any embedder
in a worker thread for async callers.

Example:
    >>> from satchel.embed import default_embedder
    >>> vectors = default_embedder().embed(["A man is eating food.", "A girl sings."])
    >>> vectors.shape, vectors.dtype
    ((2, 384), dtype('float32'))
"""

from satchel.embed._async import embed_async
from satchel.embed._minilm import MiniLMEmbedder, default_embedder
from satchel.embed._model_progress import load_model_with_progress, with_model_progress
from satchel.embed._protocol import Embedder, LazyEmbedder

__all__ = [
    "Embedder",
    "LazyEmbedder",
    "MiniLMEmbedder",
    "default_embedder",
    "embed_async",
    "load_model_with_progress",
    "with_model_progress",
]
