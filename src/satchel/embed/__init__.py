"""Text embeddings for hybrid search: a local model (no torch, no network) or a provider's.

:class:`Embedder` is what satchel needs from any embedding model; bring your own by
implementing it. :class:`MiniLMEmbedder` is the bundled one: all-MiniLM-L6-v2 as int8
ONNX on onnxruntime, 384 dimensions, loaded on first use. :class:`OpenAIEmbedder`
(:func:`openai_embedder`) uses a provider instead: OpenAI, or any OpenAI-compatible
server (Ollama, LM Studio, vLLM, llama.cpp); :func:`embedder_from_spec` picks one by
the name a command's ``--embedder`` takes. :func:`default_embedder`
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
from satchel.embed._openai import OpenAIEmbedder, openai_embedder
from satchel.embed._protocol import Embedder, LazyEmbedder
from satchel.embed._spec import embedder_from_spec

__all__ = [
    "Embedder",
    "LazyEmbedder",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "default_embedder",
    "embed_async",
    "embedder_from_spec",
    "load_model_with_progress",
    "openai_embedder",
    "with_model_progress",
]
