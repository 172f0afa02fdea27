"""The examples in satchel.schema's docstrings run and say what happens."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "satchel.schema",
    "satchel.schema._normalize",
    "satchel.schema._dialects",
    "satchel.schema._check",
    "satchel.schema._definition",
    "satchel.schema._strict",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
