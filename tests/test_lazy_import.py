"""``import satchel`` is light: the heavy dependencies load when a name that needs
them is first used, and every name in ``__all__`` still imports from the root."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import satchel

HEAVY = ("numpy", "usearch", "psycopg", "onnxruntime", "starlette", "httpx")


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_importing_satchel_loads_none_of_the_heavy_dependencies() -> None:
    loaded = _loaded_after("import satchel")
    assert "satchel" in loaded
    heavy = [m for m in loaded if m.split(".")[0] in HEAVY]
    assert heavy == []
    # nor any subpackage: the root names them lazily
    assert [m for m in loaded if m.startswith("satchel.")] == [
        "satchel._errors",
        "satchel._version",
    ]


def test_the_registry_alone_loads_no_vector_index_or_database_driver() -> None:
    loaded = _loaded_after("from satchel import ToolRegistry, tool")
    assert "satchel.registry" in loaded
    assert [m for m in loaded if m.split(".")[0] in HEAVY] == []


def test_every_exported_name_imports_from_the_root() -> None:
    # a fresh interpreter, so each name goes through the lazy lookup
    code = (
        "import satchel\n"
        "for name in satchel.__all__:\n"
        "    exec(f'from satchel import {name}')\n"
        "    assert globals()[name] is getattr(satchel, name)"
    )
    loaded = _loaded_after(code)
    assert {"satchel.agent", "satchel.memory", "satchel.meta"} <= set(loaded)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        satchel.no_such_name  # noqa: B018  # pyright: ignore[reportAttributeAccessIssue]


def test_dir_lists_the_lazy_names_before_they_load() -> None:
    assert set(satchel.__all__) <= set(dir(satchel))
