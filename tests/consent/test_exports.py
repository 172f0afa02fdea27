"""The consent package's public API is deliberate and documented."""

from __future__ import annotations

import inspect

import satchel.consent


def test_all_is_sorted_and_complete() -> None:
    exported = list(satchel.consent.__all__)
    assert exported == sorted(exported)
    public = {
        n
        for n, v in vars(satchel.consent).items()
        if not n.startswith("_") and not inspect.ismodule(v)
    }
    assert public - {"annotations"} <= set(exported)


def test_every_export_has_a_docstring() -> None:
    for name in satchel.consent.__all__:
        obj = getattr(satchel.consent, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), name
