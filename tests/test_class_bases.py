"""Parts are composed, not stacked: no class in satchel stacks more than one satchel
base (issue 29, item 1). Each class's MRO is walked; the roots every tool or registry
shares (``BaseTool``, ``Tool``, ``BaseRegistry``), protocols and exception types are
not counted."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import satchel
from satchel import Tool
from satchel.registry import BaseRegistry
from satchel.tools import BaseTool

ROOTS: frozenset[type] = frozenset({BaseTool, Tool, BaseRegistry})
"""Roots of a family (every tool, every registry), which any member may add to."""

ALLOWED: dict[str, str] = {}
"""Classes that still stack bases, and who recomposes them."""


def _satchel_classes() -> list[type]:
    classes: dict[str, type] = {}
    for module in pkgutil.walk_packages(satchel.__path__, "satchel."):
        loaded = importlib.import_module(module.name)
        for _, cls in inspect.getmembers(loaded, inspect.isclass):
            if cls.__module__ == loaded.__name__:
                classes[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return list(classes.values())


def _stacked(cls: type) -> list[str]:
    """The satchel classes ``cls`` inherits from, roots, protocols and exceptions left
    out."""
    return [
        base.__qualname__
        for base in cls.__mro__[1:]
        if base.__module__.startswith("satchel.")
        and base not in ROOTS
        and not getattr(base, "_is_protocol", False)
        and not issubclass(base, BaseException)
    ]


def test_the_walk_sees_every_package_and_counts_a_stack() -> None:
    classes = _satchel_classes()
    packages = {c.__module__.split(".")[1] for c in classes}
    assert {"agent", "meta", "registry", "memory", "mcp", "cli", "toolkit"} <= packages

    class Base:
        pass

    class Middle(Base):
        pass

    class Top(Middle):
        pass

    for made in (Base, Middle, Top):
        made.__module__ = "satchel.example"
    assert [name.rpartition(".")[2] for name in _stacked(Top)] == ["Middle", "Base"]
    assert len(_stacked(Middle)) == 1


def test_no_class_stacks_more_than_one_satchel_base() -> None:
    stacked = {
        f"{cls.__module__}.{cls.__qualname__}": bases
        for cls in _satchel_classes()
        if not issubclass(cls, BaseException) and len(bases := _stacked(cls)) > 1
    }
    assert {name: bases for name, bases in stacked.items() if name not in ALLOWED} == {}
    assert set(ALLOWED) <= set(stacked), "an allowed class no longer stacks: drop its line"
