"""Loading what an option names as ``MODULE:ATTR`` (or ``path/to/file.py:ATTR``): the
``--tools`` registries and the ``--model`` objects. Any error in the user's code becomes
one :func:`~satchel.serve.option_error` line naming the option, never a traceback."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio

from satchel._errors import SatchelError
from satchel.registry import BaseRegistry
from satchel.serve._options import option_error
from satchel.tools import BaseTool

__all__ = ["check_replacements", "load_object", "load_registry", "load_tools"]

logger = logging.getLogger("satchel.serve")

_EXAMPLE = "satchel.examples:registry"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SatchelError):
        return exc.message
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _looks_like_path(module: str) -> bool:
    return module.endswith(".py") or "/" in module or os.sep in module


def _import_file(path_text: str, option: str) -> object:
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise option_error(option, f"there is no file {path_text!r}.")
    name = f"_satchel_tools_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise option_error(option, f"{path_text!r} cannot be imported as Python.")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # as when running the file: its neighbours import
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the boundary: any error in the user's file is one line
        del sys.modules[name]
        logger.debug("importing %s failed", path_text, exc_info=exc)
        raise option_error(option, f"importing {path_text!r} failed: {_describe(exc)}") from exc
    return module


def _import_module(name: str, option: str) -> object:
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)  # as `python -m`: modules in the current folder import
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise option_error(
                option,
                f"there is no module {name!r} (is it installed, or in the current folder?).",
            ) from exc
        logger.debug("importing %s failed", name, exc_info=exc)
        raise option_error(option, f"cannot import {name!r}: {_describe(exc)}") from exc
    except Exception as exc:  # the boundary: any error in the user's module is one line
        logger.debug("importing %s failed", name, exc_info=exc)
        raise option_error(option, f"cannot import {name!r}: {_describe(exc)}") from exc


def _as_registry(value: object, target: str) -> BaseRegistry:
    if isinstance(value, BaseRegistry):
        return value
    if isinstance(value, BaseTool):
        raise option_error(
            "--tools",
            f"{target!r} is a single tool, not a ToolRegistry; put it in one: "
            "ToolRegistry([tool]).",
        )
    if inspect.isclass(value) or not callable(value):
        kind = f"the class {value.__name__}" if inspect.isclass(value) else type(value).__name__
        raise option_error(
            "--tools", f"{target!r} is {kind}, not a ToolRegistry or a function that returns one."
        )
    try:
        made: object = value()
        if inspect.iscoroutine(made):
            coroutine = made

            async def wait() -> object:
                return await coroutine

            made = anyio.run(wait)
    except Exception as exc:  # the boundary: a failing factory is one line
        logger.debug("calling %s failed", target, exc_info=exc)
        raise option_error("--tools", f"calling {target!r} failed: {_describe(exc)}") from exc
    if not isinstance(made, BaseRegistry):
        raise option_error(
            "--tools", f"{target!r} returned {type(made).__name__}, not a ToolRegistry."
        )
    return made


def load_object(target: str, option: str) -> object:
    """Import what ``MODULE:ATTR`` or ``path/to/file.py:ATTR`` names (``ATTR`` may be
    dotted), for an option such as ``--tools`` or ``--model``.

    Raises:
        SatchelUsageError: the target is malformed, cannot be imported, or lacks the
            attribute (``details["option"]`` is ``option``).
    """
    module_name, sep, attr_path = target.rpartition(":")
    if not sep or not module_name.strip() or not attr_path.strip():
        raise option_error(
            option,
            f"{target!r} is not MODULE:ATTR; write it as 'package.module:attr' (such as "
            f"{_EXAMPLE!r}) or 'path/to/file.py:attr'.",
        )
    value = (
        _import_file(module_name, option)
        if _looks_like_path(module_name)
        else _import_module(module_name, option)
    )
    for part in attr_path.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise option_error(option, f"{module_name!r} has no attribute {attr_path!r}.") from None
    return value


def load_registry(target: str) -> BaseRegistry:
    """Import the registry that ``--tools`` names.

    Args:
        target: ``package.module:attr`` or ``path/to/file.py:attr``; ``attr`` may be
            dotted (``module:holder.registry``) and may name a ToolRegistry or a
            function (sync or async) that takes no arguments and returns one.

    Raises:
        SatchelUsageError: the module or file cannot be imported, the attribute is
            missing, or it is not (and does not return) a ToolRegistry
            (``details["option"]`` is ``"--tools"``).
    """
    return _as_registry(load_object(target, "--tools"), target)


def check_replacements(
    replaced: Sequence[str], registries: Sequence[tuple[str, BaseRegistry]]
) -> None:
    """Each ``--replace`` name must be defined by one of the ``--tools`` registries
    (given as ``(target, registry)``).

    Raises:
        SatchelUsageError: none of them defines a replaced name (``details["option"]``
            is ``"--replace"``).
    """
    for name in replaced:
        if not any(name in registry for _, registry in registries):
            where = ", ".join(target for target, _ in registries) or "no --tools registry"
            raise option_error(
                "--replace",
                f"no --tools registry defines {name!r} to replace the built-in (looked in "
                f"{where}).",
            )


def load_tools(
    targets: Sequence[str | BaseRegistry], *, replace: Sequence[str] = ()
) -> list[tuple[str, BaseRegistry]]:
    """The ``--tools`` registries as ``(what names it, registry)``: each target loaded
    with :func:`load_registry` (a registry given itself is taken as it is, named
    ``tools[i]`` after its place), then checked to define every ``replace`` name.

    Raises:
        SatchelUsageError: a target cannot be loaded, or no registry defines a
            ``replace`` name (``details["option"]`` names the option).
    """
    loaded = [
        (target, load_registry(target)) if isinstance(target, str) else (f"tools[{i}]", target)
        for i, target in enumerate(targets)
    ]
    check_replacements(replace, loaded)
    return loaded
