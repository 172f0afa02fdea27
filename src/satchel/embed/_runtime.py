"""Loading the ONNX session and the tokenizer: the typed boundary to both libraries.

``onnxruntime`` ships no type information and ``tokenizers`` only some, so the few
methods satchel calls are described here by protocols, and both libraries' errors (bare
``Exception`` subclasses) are mapped to :class:`~satchel.EmbeddingError` at load.
Both libraries are imported only when :func:`load_runtime` runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from satchel._errors import EmbeddingError

__all__ = ["Encoding", "OnnxSession", "Runtime", "TextTokenizer", "load_runtime"]


class Encoding(Protocol):
    """One tokenised text."""

    @property
    def ids(self) -> list[int]:
        """The token ids, ``[CLS]`` and ``[SEP]`` included."""
        ...


class TextTokenizer(Protocol):
    """The part of ``tokenizers.Tokenizer`` satchel uses."""

    def encode(self, sequence: str) -> Encoding:
        """Tokenise one text."""
        ...

    def encode_batch(self, input: Sequence[str]) -> Sequence[Encoding]:
        """Tokenise many texts (in parallel, without the GIL)."""
        ...


class NodeArg(Protocol):
    """An input or output of an ONNX graph."""

    @property
    def name(self) -> str:
        """The input's or output's name."""
        ...

    @property
    def shape(self) -> Sequence[int | str | None]:
        """Its shape; symbolic dimensions are strings or ``None``."""
        ...


class OnnxSession(Protocol):
    """The part of ``onnxruntime.InferenceSession`` satchel uses (thread-safe)."""

    def run(
        self, output_names: list[str], input_feed: Mapping[str, npt.NDArray[np.int64]]
    ) -> Sequence[object]:
        """Run the graph once."""
        ...

    def get_inputs(self) -> Sequence[NodeArg]:
        """The graph's inputs."""
        ...

    def get_outputs(self) -> Sequence[NodeArg]:
        """The graph's outputs."""
        ...


@dataclass(frozen=True, kw_only=True, slots=True)
class Runtime:
    """A loaded model and tokenizer, shared by every call and thread."""

    session: OnnxSession
    tokenizer: TextTokenizer
    output_name: str
    wants_token_type_ids: bool


def _load_tokenizer(path: Path, max_tokens: int) -> TextTokenizer:
    tokenizers: Any = importlib.import_module("tokenizers")
    try:
        tokenizer = tokenizers.Tokenizer.from_file(str(path))
    # tokenizers raises a bare Exception for any unreadable or invalid file.
    except Exception as exc:
        raise EmbeddingError(
            f"Cannot load the embedding tokenizer {str(path)!r}: {exc}",
            details={"path": str(path)},
        ) from exc
    # The shipped tokenizer.json pads and truncates to 128; satchel pads per batch itself.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens)
    return tokenizer


def _open_session(path: Path, threads: int) -> OnnxSession:
    ort: Any = importlib.import_module("onnxruntime")
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Idle worker threads sleep instead of spinning: the cores are shared.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return ort.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    # onnxruntime's errors (InvalidProtobuf, Fail, ...) derive from bare Exception.
    except Exception as exc:
        raise EmbeddingError(
            f"Cannot load the embedding model {str(path)!r}: {exc}",
            details={"path": str(path)},
        ) from exc


def load_runtime(
    *, model_path: Path, tokenizer_path: Path, threads: int, max_tokens: int, dim: int
) -> Runtime:
    """Load the tokenizer and the ONNX session, and check the model's inputs and outputs.

    Args:
        model_path: The ONNX model.
        tokenizer_path: The ``tokenizer.json``.
        threads: onnxruntime intra-op threads.
        max_tokens: Where the tokenizer truncates, special tokens included.
        dim: The vector width the model must produce.

    Returns:
        The loaded runtime.

    Raises:
        EmbeddingError: A file cannot be loaded, or the model is not a BERT-like
            encoder of width ``dim``.
    """
    tokenizer = _load_tokenizer(tokenizer_path, max_tokens)
    session = _open_session(model_path, threads)
    input_names = {node.name for node in session.get_inputs()}
    missing = {"input_ids", "attention_mask"} - input_names
    outputs = session.get_outputs()
    if missing or not outputs:
        raise EmbeddingError(
            f"The embedding model {str(model_path)!r} does not look like a BERT encoder: "
            f"it lacks the inputs {sorted(missing)} or has no outputs.",
            details={"path": str(model_path), "inputs": sorted(input_names)},
        )
    width = outputs[0].shape[-1] if outputs[0].shape else None
    if isinstance(width, int) and width != dim:
        raise EmbeddingError(
            f"The embedding model {str(model_path)!r} gives {width}-dimensional vectors, "
            f"not {dim}.",
            details={"path": str(model_path), "dim": width},
        )
    return Runtime(
        session=session,
        tokenizer=tokenizer,
        output_name=outputs[0].name,
        wants_token_type_ids="token_type_ids" in input_names,
    )
