"""Deriving an int8-arithmetic copy of the embedding model, once per machine.

The bundled all-MiniLM-L6-v2 file stores its weights as int8 but multiplies in float32:
onnxruntime widens every weight when it loads the model, so each text costs a float32
transformer pass. This module folds those weights into a float32 graph (onnxruntime's
basic graph optimisation, written to a file) and re-quantises it with onnxruntime's own
dynamic quantiser (:data:`RECIPE`: per-channel 7-bit signed weights, activations
quantised at each run), so the matrix products run as integer kernels.

The 7 bits make the vectors the same on every x86-64 CPU. Without VNNI (AVX2-only
CPUs, AVX-512 without VNNI) onnxruntime adds each pair of uint8 x int8 products into a
16-bit lane that saturates; full 8-bit weights overflowed it, and those CPUs got other
vectors than VNNI or AMX ones (cosine 0.97 to 0.99 apart), enough to reorder near-ties.
With 7-bit weights every sum is exact, and a text's vector differs between the two
kinds of CPU only by float rounding. On both, vectors stay within about cosine 0.98 of
the float32 model's (0.99 on average), and one short query embeds in about 60% of the
float model's time on the project's machine (figures and commands in
``bench/README.md``, from ``bench/embed.py``).

Nothing here is hand-written numerics: the quantisation is
:func:`onnxruntime.quantization.quantize_dynamic` (which needs the ``onnx`` package);
this module only names, caches and guards its output. The derived file is written to a
cache directory, named by a digest of the source file, the onnxruntime version and the
recipe, and moved into place atomically, so concurrent processes never read half a
file, a changed model or runtime gets a new file, and a damaged one is rebuilt. Building
takes a few seconds, once; it is logged at ``INFO``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import platformdirs

from satchel._errors import EmbeddingError

__all__ = [
    "BUILD_MESSAGE",
    "CACHE_ENV_VAR",
    "QUANTIZE_ENV_VAR",
    "RECIPE",
    "RECIPES",
    "Recipe",
    "model_cache_dir",
    "quantized_model",
]

logger = logging.getLogger("satchel.embed")

CACHE_ENV_VAR: Final = "SATCHEL_CACHE_DIR"
"""Environment variable naming the directory derived model files are cached in."""

QUANTIZE_ENV_VAR: Final = "SATCHEL_EMBED_QUANTIZE"
"""Environment variable that, set to ``0``, ``false``, ``no`` or ``off``, turns the int8
arithmetic off for embedders that were not told either way."""

BUILD_MESSAGE: Final = "building the int8 embedding model (first use only, a few seconds)"
"""What :func:`quantized_model` reports to its ``progress`` callback before a build."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Recipe:
    """How the int8 copy is quantised: the options given to onnxruntime's dynamic
    quantiser (activations are always unsigned 8-bit, quantised at each run).

    Attributes:
        name: Names the recipe in the cache key; a new way of building gets a new name,
            so files built the old way are not reused.
        unsigned_weights: Weights as ``uint8`` (onnxruntime's u8u8 kernels) instead of
            ``int8`` (its u8s8 kernels).
        per_channel: One scale per output column of each weight matrix instead of one
            per matrix.
        reduce_range: Signed weights in -64..64 (7 bits) instead of -127..127.
    """

    name: str
    unsigned_weights: bool = False
    per_channel: bool = True
    reduce_range: bool = False


RECIPES: Final = {
    recipe.name: recipe
    for recipe in (
        Recipe(name="dynamic-int8-per-channel-v1"),
        Recipe(name="dynamic-int8-per-channel-7bit-v2", reduce_range=True),
        Recipe(name="dynamic-uint8-per-channel-v1", unsigned_weights=True),
    )
}
"""The recipes ``bench/embed.py`` compares, by name; :data:`RECIPE` is one of them."""

RECIPE: Final = RECIPES["dynamic-int8-per-channel-7bit-v2"]
"""The recipe satchel uses: signed 7-bit weights, one scale per output column.

Every int8 product sum is then exact on every x86-64 CPU. onnxruntime multiplies
``uint8`` activations by ``int8`` weights with ``VPDPBUSD`` where the CPU has VNNI
(AVX-512 VNNI or AVX-VNNI), which sums into 32 bits; without VNNI (AVX2, AVX-512 without
VNNI) it uses ``VPMADDUBSW``, which adds each pair of products into 16 bits and
saturates at 32767. With 8-bit weights a pair reaches 2 x 255 x 127 = 64770, so those
CPUs clipped sums and got other vectors; with 7-bit weights a pair stays within
2 x 255 x 64 = 32640. Unsigned weights would also be exact, but onnxruntime's u8u8
kernels ran a third slower (``bench/README.md``, "Embeddings").
"""
_CHUNK: Final = 1 << 20
_TIMEOUT: Final = 600
"""Seconds a build may take (a few are typical)."""


def quantize_by_default() -> bool:
    """Whether embedders use the int8-arithmetic model when not told: yes, unless
    ``$SATCHEL_EMBED_QUANTIZE`` is ``0``, ``false``, ``no`` or ``off``."""
    value = os.environ.get(QUANTIZE_ENV_VAR, "").strip().casefold()
    return value not in {"0", "false", "no", "off"}


def model_cache_dir() -> Path:
    """Where derived model files live: ``$SATCHEL_CACHE_DIR/models`` if set, else the
    user's cache directory (``~/.cache/satchel/models`` on Linux)."""
    root = os.environ.get(CACHE_ENV_VAR)
    base = Path(root) if root else Path(platformdirs.user_cache_dir("satchel"))
    return base / "models"


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            sha.update(block)
    return sha.hexdigest()


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise EmbeddingError(
            f"Cannot build the int8 embedding model: {exc}. Install the 'onnx' package, "
            f"or set ${QUANTIZE_ENV_VAR}=0 to embed with float32 arithmetic.",
            details={"module": name},
        ) from exc


def _convert(source: Path, target: Path, recipe: Recipe) -> None:
    """Fold ``source`` to float32 and quantise it into ``target`` (in this process)."""
    ort = _import("onnxruntime")
    quantization = _import("onnxruntime.quantization")
    folded = target.with_name(target.stem + "-folded.onnx")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])
    quantization.quantize_dynamic(
        str(folded),
        str(target),
        weight_type=(
            quantization.QuantType.QUInt8
            if recipe.unsigned_weights
            else quantization.QuantType.QInt8
        ),
        op_types_to_quantize=["MatMul"],
        per_channel=recipe.per_channel,
        reduce_range=recipe.reduce_range,
    )


def _build(source: Path, target: Path, recipe: Recipe) -> None:
    """Build the copy in a child process, then move it to ``target``.

    A child process keeps the quantiser's memory (a float32 copy of every weight) and
    its chatter (it logs through the root logger) out of the caller's process.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as scratch:
        built = Path(scratch) / "model.onnx"
        options = json.dumps(dataclasses.asdict(recipe))
        command = [sys.executable, "-m", __name__, str(source), str(built), options]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=_TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            raise EmbeddingError(
                f"Building the int8 embedding model took over {_TIMEOUT} s; gave up.",
                details={"path": str(source)},
            ) from exc
        if done.returncode != 0 or not built.is_file():
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            reason = lines[-1] if lines else f"exit status {done.returncode}"
            raise EmbeddingError(
                f"Cannot build an int8 copy of the embedding model {str(source)!r}: {reason}",
                details={"path": str(source), "stderr": "\n".join(lines[-20:])},
            )
        os.replace(built, target)


def _prune(keep: Path) -> None:
    """Delete the copies of the same source built for other runtimes or recipes (about
    58 MB each). A process still using one keeps its loaded model: the file's data
    lives until it is closed."""
    ours = re.compile(re.escape(keep.name.rsplit("-", 1)[0]) + r"-[0-9a-f]{24}\.onnx")
    for stale in keep.parent.iterdir():
        if stale != keep and ours.fullmatch(stale.name):
            logger.info(
                "Removing the outdated int8 embedding model %s (vectors stored with it "
                "stay searchable; 'satchel memory reembed' renews them)",
                stale,
            )
            stale.unlink(missing_ok=True)


def quantized_model(
    source: Path,
    *,
    cache_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    recipe: Recipe = RECIPE,
) -> Path:
    """The int8-arithmetic copy of the ONNX model ``source``, built on first use.

    Args:
        source: A float or int8-weight ONNX model.
        cache_dir: Where to keep the copy; defaults to :func:`model_cache_dir`.
        progress: Called with :data:`BUILD_MESSAGE` just before a build starts (not
            when a cached copy is used).
        recipe: How to quantise; satchel always uses :data:`RECIPE` (benchmarks
            compare others). Building one recipe's copy deletes the copies of the
            same source made by other recipes.

    Returns:
        The path of the derived model, built now if no valid copy was cached.

    Raises:
        EmbeddingError: ``source`` cannot be read or converted, ``onnx`` is not
            installed, or the cache directory is not writable.
    """
    directory = cache_dir if cache_dir is not None else model_cache_dir()
    ort = _import("onnxruntime")
    try:
        identity = f"{_digest(source)}:{ort.__version__}:{recipe.name}"
    except OSError as exc:
        raise EmbeddingError(
            f"Cannot read the embedding model {str(source)!r}: {exc.strerror or exc}",
            details={"path": str(source)},
        ) from exc
    key = hashlib.sha256(identity.encode()).hexdigest()[:24]
    target = directory / f"{source.stem}-{key}.onnx"
    if target.is_file() and target.stat().st_size > 0:
        return target
    logger.info(
        "Building the int8 copy of the embedding model %s in %s (once; a few seconds)",
        source,
        directory,
    )
    if progress is not None:
        progress(BUILD_MESSAGE)
    try:
        _build(source, target, recipe)
        _prune(target)
    except OSError as exc:
        raise EmbeddingError(
            f"Cannot write the int8 embedding model to {str(directory)!r}: "
            f"{exc.strerror or exc}. Set ${CACHE_ENV_VAR} to a writable directory, or "
            f"${QUANTIZE_ENV_VAR}=0.",
            details={"path": str(directory)},
        ) from exc
    return target


if __name__ == "__main__":  # the child process of _build
    _convert(Path(sys.argv[1]), Path(sys.argv[2]), Recipe(**json.loads(sys.argv[3])))
