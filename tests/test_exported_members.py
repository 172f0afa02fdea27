"""The public API is deliberate: ``__all__`` is complete, sorted and documented."""

from __future__ import annotations

import importlib
import inspect

import pytest

import satchel

PACKAGES = [
    "satchel",
    "satchel.agent",
    "satchel.builtin",
    "satchel.channels",
    "satchel.compat",
    "satchel.compose",
    "satchel.consent",
    "satchel.console",
    "satchel.db",
    "satchel.db.sqlite",
    "satchel.embed",
    "satchel.mcp",
    "satchel.mcp.mount",
    "satchel.mcp.server",
    "satchel.memory",
    "satchel.memory.postgres",
    "satchel.meta",
    "satchel.providers",
    "satchel.registry",
    "satchel.retrieval",
    "satchel.rules",
    "satchel.schema",
    "satchel.serve",
    "satchel.toolkit",
    "satchel.toolkit.mail",
    "satchel.tools",
    "satchel.up",
]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_is_sorted_and_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    # ruff's order (RUF022): constants, then classes, then functions, each alphabetical
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
    public = {
        n for n, v in vars(module).items() if not n.startswith("_") and not inspect.ismodule(v)
    }
    public -= {"annotations"}
    assert public <= set(exported) | {"Any", "Literal", "Mapping"}, public - set(exported)


@pytest.mark.parametrize("name", PACKAGES)
def test_every_public_name_has_a_docstring(name: str) -> None:
    module = importlib.import_module(name)
    for attr in module.__all__:
        obj = getattr(module, attr)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"{name}.{attr} has no docstring"


def test_version_is_exported() -> None:
    assert satchel.__version__
