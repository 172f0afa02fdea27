from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from satchel import __version__
from satchel.cli import app

runner = CliRunner()


def run(*args: str, stdin: str | None = None) -> Result:
    return runner.invoke(app, list(args), input=stdin, catch_exceptions=False)


def assert_one_line_usage_error(result: Result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.output
    for word in words:
        assert word in lines[0]


def test_tools_list_shows_every_demo_tool_in_a_table() -> None:
    result = runner.invoke(app, ["tools", "list"], env={"COLUMNS": "200"}, catch_exceptions=False)

    assert result.exit_code == 0, result.output
    for name in ("word_count", "add", "notes", "echo"):
        assert name in result.stdout
    assert "destructive: delete" in result.stdout
    assert "read-only" in result.stdout


def test_tools_list_json_gives_flags_and_operations_for_scripts() -> None:
    result = run("tools", "list", "--json")

    assert result.exit_code == 0, result.output
    entries = {e["name"]: e for e in json.loads(result.stdout)}
    assert list(entries) == ["word_count", "add", "notes", "echo"]
    assert entries["add"]["read_only"] is True
    assert entries["add"]["category"] == "math"
    assert entries["notes"]["destructive"] is True
    assert entries["notes"]["read_only"] is False
    assert entries["notes"]["operations"]["delete"]["annotations"]["destructive"] is True
    assert "input_schema" not in entries["add"]


@pytest.mark.parametrize(
    ("dialect", "key"),
    [
        ("openai", "function"),
        ("openai-strict", "function"),
        ("anthropic", "input_schema"),
        ("gemini", "parameters"),
        ("mcp", "inputSchema"),
    ],
)
def test_tools_schema_prints_one_tool_in_each_dialect(dialect: str, key: str) -> None:
    result = run("tools", "schema", "add", "--dialect", dialect)

    assert result.exit_code == 0, result.output
    assert key in json.loads(result.stdout)


def test_tools_schema_without_a_name_prints_every_definition() -> None:
    result = run("tools", "schema", "-d", "anthropic")

    assert result.exit_code == 0, result.output
    assert [d["name"] for d in json.loads(result.stdout)] == ["word_count", "add", "notes", "echo"]


def test_tools_call_prints_the_output_and_exits_0() -> None:
    result = run("tools", "call", "add", '{"a": 2, "b": 3}')

    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "5"


def test_tools_call_json_prints_the_whole_result() -> None:
    result = run("tools", "call", "word_count", '{"text": "one two three"}', "--json")

    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"ok": True, "output": {"count": 3}}


def test_tools_call_reads_arguments_from_stdin_with_a_dash() -> None:
    result = run("tools", "call", "echo", "-", stdin='{"text": "from stdin"}')

    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "from stdin"


def test_tools_call_with_an_error_result_prints_it_and_exits_1() -> None:
    result = run("tools", "call", "add", '{"a": "two"}')

    assert result.exit_code == 1
    assert result.stdout.startswith("Error (invalid_arguments):")
    assert "`b` is required" in result.stdout


def test_tools_call_error_result_as_json_exits_1() -> None:
    result = run("tools", "call", "notes", '{"operation": "read", "title": "x"}', "--json")

    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["kind"] == "retry"


def test_unknown_tool_is_one_line_with_suggestions() -> None:
    assert_one_line_usage_error(run("tools", "call", "ad", "{}"), "'ad'", "'add'")
    assert_one_line_usage_error(run("tools", "schema", "word"), "'word_count'")


@pytest.mark.parametrize(
    ("args_json", "words"),
    [("{a: 1}", "not valid JSON"), ("[1, 2]", "JSON object"), ("", "not valid JSON")],
)
def test_bad_arguments_json_is_one_line(args_json: str, words: str) -> None:
    assert_one_line_usage_error(run("tools", "call", "add", args_json), "ARGS_JSON", words)


def test_unknown_dialect_is_one_line_listing_the_dialects() -> None:
    result = run("tools", "schema", "add", "--dialect", "cohere")

    assert_one_line_usage_error(result, "'cohere'", "openai-strict", "gemini")


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("no_such_module_xyz:registry", "there is no module 'no_such_module_xyz'"),
        ("satchel.examples", "not MODULE:ATTR"),
        ("satchel.examples:nothing_here", "has no attribute 'nothing_here'"),
        ("satchel.examples:add", "single tool"),
        ("satchel.examples:WordCount", "the class WordCount"),
        ("satchel:__version__", "is str, not a ToolRegistry"),
        ("satchel.examples:CountIn.model_fields", "dict"),
        ("missing/file.py:registry", "no file"),
    ],
)
def test_a_bad_tools_target_is_one_line_and_exit_2(target: str, words: str) -> None:
    result = run("tools", "list", "--tools", target)

    assert_one_line_usage_error(result, "--tools", words)


def test_tools_from_a_file_path_with_a_factory_function(tmp_path: Path) -> None:
    path = tmp_path / "my_tools.py"
    path.write_text(
        textwrap.dedent(
            '''
            from satchel import ToolRegistry, tool

            @tool
            def shout(text: str) -> str:
                """Upper-case the text.

                Args:
                    text: What to shout.
                """
                return text.upper()

            def make_registry() -> ToolRegistry:
                return ToolRegistry([shout])

            async def make_later() -> ToolRegistry:
                return ToolRegistry([shout])
            '''
        )
    )

    listed = run("tools", "list", "--json", "--tools", f"{path}:make_registry")
    called = run("tools", "call", "shout", '{"text": "hi"}', "--tools", f"{path}:make_later")

    assert [e["name"] for e in json.loads(listed.stdout)] == ["shout"]
    assert called.stdout.strip() == "HI"


def test_a_file_that_fails_to_import_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text("raise RuntimeError('database is not configured')\n")

    result = run("tools", "list", "--tools", f"{path}:registry")

    assert_one_line_usage_error(result, "RuntimeError: database is not configured")


def test_a_factory_that_raises_or_returns_the_wrong_thing_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "factories.py"
    path.write_text("def boom():\n    raise ValueError('no')\n\ndef wrong():\n    return 3\n")

    assert_one_line_usage_error(run("tools", "list", "-t", f"{path}:boom"), "ValueError: no")
    assert_one_line_usage_error(run("tools", "list", "-t", f"{path}:wrong"), "returned int")


def test_tools_option_reads_the_environment(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["tools", "list"], env={"SATCHEL_TOOLS": "nope_module:x"}, catch_exceptions=False
    )

    assert_one_line_usage_error(result, "nope_module")


def test_click_usage_errors_are_one_line_too() -> None:
    assert_one_line_usage_error(run("tools", "call"), "Missing argument 'NAME'", "--help")
    assert_one_line_usage_error(run("tools", "list", "--bogus"), "--bogus")
    assert_one_line_usage_error(run("toolz"), "toolz")
    assert_one_line_usage_error(run("--log-level", "loud", "tools", "list"), "loud")


def test_version_prints_the_version() -> None:
    result = run("--version")

    assert result.exit_code == 0
    assert result.stdout.strip() == f"satchel {__version__}"


def test_log_level_debug_logs_to_stderr_and_is_undone_after_the_command(
    tmp_path: Path,
) -> None:
    path = tmp_path / "broken_tools.py"
    path.write_text("raise RuntimeError('boom')\n")
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)

    result = run("--log-level", "DEBUG", "tools", "list", "--tools", f"{path}:registry")

    assert result.exit_code == 2
    assert result.stdout == ""
    assert "DEBUG satchel.serve: importing" in result.stderr  # the loader is satchel.serve's
    assert result.stderr.strip().splitlines()[-1].startswith("Error: ")
    assert (root.level, root.handlers) == (level, handlers)


def test_no_arguments_shows_the_help() -> None:
    result = run()

    assert "tools" in result.output
    assert "Traceback" not in result.output


def _subprocess_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SATCHEL_TOOLS", None)
    env["NO_COLOR"] = "1"
    return env


def test_python_dash_m_satchel_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "satchel", "tools", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_subprocess_env(),
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert "word_count" in [e["name"] for e in json.loads(done.stdout)]


def test_the_installed_console_script_exits_2_with_one_line_for_bad_json() -> None:
    script = Path(sys.executable).parent / "satchel"
    if not script.exists():
        found = shutil.which("satchel")
        if found is None:
            pytest.skip("the satchel console script is not installed")
        script = Path(found)

    ok = subprocess.run(
        [str(script), "tools", "list"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_subprocess_env(),
        check=False,
    )
    bad = subprocess.run(
        [str(script), "tools", "call", "add", "{oops"],
        capture_output=True,
        text=True,
        timeout=60,
        env=_subprocess_env(),
        check=False,
    )

    assert ok.returncode == 0, ok.stderr
    assert "notes" in ok.stdout
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1
    assert bad.stderr.startswith("Error: Invalid value for 'ARGS_JSON': not valid JSON")


def test_tools_call_reaches_an_older_version_and_prints_its_notice() -> None:
    tools = f"{Path(__file__).parent.parent / 'mcp' / 'servers' / 'chain_tools.py'}:registry"
    older = run("tools", "call", "convert@1", '{"feet": 2}', "--tools", tools)
    latest = run("tools", "call", "convert", '{"feet": 2}', "--tools", tools)

    assert older.exit_code == 0, older.output
    assert older.stdout.strip() == "24.0"
    assert "Notice: convert@1 is deprecated: use convert@2" in older.stderr
    assert latest.stdout.strip() == "0.6096"
    assert "Notice" not in latest.stderr


def test_tools_schema_of_an_older_version_shows_that_version() -> None:
    tools = f"{Path(__file__).parent.parent / 'mcp' / 'servers' / 'chain_tools.py'}:registry"
    older = run("tools", "schema", "convert@1", "--tools", tools, "-d", "anthropic")
    alias = run("tools", "schema", "convert_v1", "--tools", tools, "-d", "anthropic")
    latest = run("tools", "schema", "convert", "--tools", tools, "-d", "anthropic")

    assert older.exit_code == 0, older.output
    assert json.loads(older.stdout)["name"] == "convert_v1"
    assert "feet to inches" in json.loads(older.stdout)["description"]
    assert json.loads(alias.stdout) == json.loads(older.stdout)
    assert json.loads(latest.stdout)["name"] == "convert"
    assert "feet to metres" in json.loads(latest.stdout)["description"]


def test_tools_schema_finds_the_tool_by_name_when_a_dialect_leaves_one_out(
    tmp_path: Path,
) -> None:
    module = tmp_path / "gemini_tools.py"
    module.write_text(
        textwrap.dedent(
            '''
            from satchel import ToolRegistry, tool

            @tool(name="9lives")
            def nine(x: int) -> int:
                """Gemini refuses a name that starts with a digit."""
                return x

            @tool
            def echo(text: str) -> str:
                """Say it back."""
                return text

            registry = ToolRegistry([nine, echo])
            '''
        )
    )
    tools = f"{module}:registry"
    echo = run("tools", "schema", "echo", "--tools", tools, "-d", "gemini")
    refused = run("tools", "schema", "9lives", "--tools", tools, "-d", "gemini")

    assert echo.exit_code == 0, echo.output
    assert json.loads(echo.stdout)["name"] == "echo"
    assert_one_line_usage_error(
        refused, "cannot be written in the gemini dialect", "start with a letter"
    )
