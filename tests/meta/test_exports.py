"""The meta package's public API is deliberate and documented."""

from __future__ import annotations

import inspect

import satchel.meta


def test_all_is_sorted_and_complete() -> None:
    exported = list(satchel.meta.__all__)
    assert exported == sorted(exported)
    public = {
        n
        for n, v in vars(satchel.meta).items()
        if not n.startswith("_") and not inspect.ismodule(v)
    }
    assert public - {"annotations"} <= set(exported)


def test_every_export_has_a_docstring() -> None:
    for name in satchel.meta.__all__:
        obj = getattr(satchel.meta, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), name
