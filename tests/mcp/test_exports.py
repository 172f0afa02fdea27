"""``satchel.mcp``'s public API is deliberate: ``__all__`` is complete, sorted and
documented."""

from __future__ import annotations

import inspect

import pytest

import satchel.mcp


def test_all_is_sorted_and_complete() -> None:
    exported = list(satchel.mcp.__all__)
    # ruff's order (RUF022): constants, then classes, then functions, each alphabetical
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
    public = {
        n for n, v in vars(satchel.mcp).items() if not n.startswith("_") and not inspect.ismodule(v)
    }
    assert public == set(exported)


def test_every_public_name_has_a_docstring() -> None:
    for name in satchel.mcp.__all__:
        obj = getattr(satchel.mcp, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), f"satchel.mcp.{name} has no docstring"


def test_the_registry_can_still_mount_through_satchel_mcp_with_a_deprecation() -> None:
    from satchel import ToolRegistry

    with pytest.warns(DeprecationWarning, match=r"satchel\.mcp\.mount_mcp\(registry"):
        mounted = ToolRegistry().mount_mcp(prefix="x", command="true")
    assert isinstance(mounted, satchel.mcp.MountedServer)
    assert mounted.prefix == "x"
