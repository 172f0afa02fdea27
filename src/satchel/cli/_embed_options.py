"""``--embedder`` and ``--embed-base-url``: the embedding model of every command that
opens memory (``serve``, ``run``, ``chat``, ``console``, ``memory reembed``), declared
once. A command adds the two options to its signature and turns them into an embedder
with :func:`resolve_embedder`; ``satchel up`` takes them the same way."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from satchel._errors import SatchelUsageError
from satchel.embed import Embedder, embedder_from_spec

__all__ = ["EmbedBaseUrlOption", "EmbedderChoice", "EmbedderOption", "resolve_embedder"]

EmbedderChoice = Embedder | Literal["default"] | None
"""What a store takes as its ``embedder``: ``"default"`` for the bundled model."""

EmbedderOption = Annotated[
    str | None,
    typer.Option(
        "--embedder",
        envvar="SATCHEL_EMBEDDER",
        metavar="SPEC",
        help="The embedding model: default (the bundled local all-MiniLM-L6-v2), "
        "openai:MODEL (OpenAI, or any OpenAI-compatible server with --embed-base-url: "
        "Ollama, LM Studio, vLLM, llama.cpp; key from SATCHEL_EMBED_API_KEY or "
        "OPENAI_API_KEY), or none (keyword search only). A database keeps the model its "
        "vectors were made with: see `satchel memory reembed` to change it.",
        show_default=False,
    ),
]
EmbedBaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--embed-base-url",
        envvar="SATCHEL_EMBED_BASE_URL",
        metavar="URL",
        help="The OpenAI-compatible server of an openai:MODEL embedder "
        "(e.g. http://localhost:11434/v1 for Ollama). Default: OpenAI's.",
        show_default=False,
    ),
]


def resolve_embedder(spec: str | None, base_url: str | None) -> EmbedderChoice:
    """The embedder ``--embedder`` and ``--embed-base-url`` name; ``"default"`` when
    neither is given (each command then uses the bundled model as before).

    A provider model whose vector size satchel does not know is asked for it now (one
    request), so a wrong URL or model name is reported before anything opens.

    Raises:
        typer.BadParameter: An unknown spec, a base URL without ``openai:``, or the
            ``openai`` extra is missing.
        EmbeddingError: The server could not be asked for the vector size.
    """
    if spec is None and not base_url:
        return "default"
    text = (spec or "default").strip()
    if base_url and not text.lower().startswith("openai:"):
        raise typer.BadParameter(
            f"is for an openai:MODEL embedder, not {text!r}.", param_hint="'--embed-base-url'"
        )
    try:
        embedder = embedder_from_spec(spec, base_url=base_url)
    except SatchelUsageError as exc:
        raise typer.BadParameter(exc.message, param_hint="'--embedder'") from None
    if embedder is not None:
        _ = embedder.dim  # a provider's model of unknown size: asked now, once
    return embedder
