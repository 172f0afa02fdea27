"""Choosing an embedder by name, as every command's ``--embedder`` does:
:func:`embedder_from_spec`."""

from __future__ import annotations

from typing import Final

from satchel._errors import SatchelUsageError
from satchel.embed._minilm import default_embedder
from satchel.embed._openai import OpenAIEmbedder
from satchel.embed._protocol import Embedder

__all__ = ["BUILTIN_SPECS", "embedder_from_spec"]

BUILTIN_SPECS: Final = ("default", "minilm")
"""The names of the bundled local model (all-MiniLM-L6-v2)."""

_NONE: Final = "none"


def embedder_from_spec(
    spec: str | None, *, base_url: str | None = None, api_key: str | None = None
) -> Embedder | None:
    """The embedder ``spec`` names:

    * ``default`` or ``minilm`` (or ``None``): the bundled local model;
    * ``openai:MODEL``: ``MODEL`` on OpenAI, or on the OpenAI-compatible server at
      ``base_url`` (Ollama, LM Studio, vLLM, llama.cpp);
    * ``none``: no embedder (keyword search only).

    Args:
        spec: What the user wrote.
        base_url: The server of an ``openai:`` embedder.
        api_key: Its key (default: ``SATCHEL_EMBED_API_KEY``, then ``OPENAI_API_KEY``).

    Raises:
        SatchelUsageError: An unknown spec, a ``base_url`` for the local model, or what
            :class:`~satchel.embed.OpenAIEmbedder` raises.

    Example:
        >>> embedder_from_spec("openai:nomic-embed-text", base_url="http://localhost:11434/v1").name
        'openai:nomic-embed-text'
    """
    text = (spec or "default").strip()
    provider, sep, model = text.partition(":")
    if sep and provider.lower() == "openai":
        return OpenAIEmbedder(model.strip(), base_url=base_url or None, api_key=api_key)
    if sep:
        raise SatchelUsageError(
            f"{text!r} is not an embedder satchel knows: write openai:MODEL (OpenAI, or any "
            "OpenAI-compatible server with a base URL), default, or none."
        )
    if base_url:
        raise SatchelUsageError(f"a base URL is for an openai:MODEL embedder, not {text!r}.")
    if text.lower() in BUILTIN_SPECS:
        return default_embedder()
    if text.lower() == _NONE:
        return None
    raise SatchelUsageError(
        f"{text!r} is not an embedder satchel knows: write default (the bundled local "
        "model), openai:MODEL, or none (keyword search only)."
    )
