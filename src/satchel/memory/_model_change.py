"""Words for an embedding model change: which model a store's vectors are of, and what
to run to move them to another (:func:`model_change_message`).

A store records its embedder's id, ``NAME:DIM``, beside its vectors (SQLite's ``meta``
table, PostgreSQL's ``satchel_meta``). Opened with another embedder, it keeps vector
search off (keyword search only) and stores no vector, so two models' vectors never
mix, until :meth:`~satchel.memory.MemoryStore.reembed` moves every vector to the new
model (``satchel memory reembed --embedder SPEC``).
"""

from __future__ import annotations

__all__ = ["describe_model", "embedder_spec", "model_change_message"]

_BUNDLED_PREFIX = "all-MiniLM-L6-v2"


def _split(model_id: str) -> tuple[str, int | None]:
    name, sep, dim = model_id.rpartition(":")
    if sep and dim.isdigit():
        return name, int(dim)
    return model_id, None


def describe_model(model_id: str) -> str:
    """``NAME:DIM`` in words: ``'openai:text-embedding-3-small' (1536 dimensions)``.

    Example:
        >>> describe_model("openai:fake-embed:64")
        "'openai:fake-embed' (64 dimensions)"
    """
    name, dim = _split(model_id)
    return f"{name!r} ({dim} dimensions)" if dim is not None else repr(name)


def embedder_spec(model_id: str) -> str:
    """What ``--embedder`` takes for the model of ``model_id``: ``default`` for the
    bundled model, else its name (``openai:MODEL``).

    Example:
        >>> embedder_spec("all-MiniLM-L6-v2-int8:384")
        'default'
    """
    name, _ = _split(model_id)
    return "default" if name.startswith(_BUNDLED_PREFIX) else name


def model_change_message(stored: str, asked: str) -> str:
    """Why vector search is off: the store's vectors are of ``stored``, the embedder is
    ``asked`` (both ``NAME:DIM``), and the command that moves the vectors over."""
    return (
        f"the memory database holds vectors of {describe_model(stored)}, not of the "
        f"embedder in use, {describe_model(asked)}: vector search is off (keyword search "
        f"only) until `satchel memory reembed --embedder {embedder_spec(asked)}` moves "
        f"them to it (or use --embedder {embedder_spec(stored)}, as they were written)"
    )
