"""``satchel serve``'s arguments: one clear line and exit code 2 for a bad one."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner, Result

from satchel.cli import app
from satchel.cli._serve_args import attach_headers, parse_http, parse_mount, parse_mount_header
from satchel.serve import MountSpec, ServeOptions, build_catalog, served_registry

runner = CliRunner()


def run(*args: str) -> Result:
    return runner.invoke(app, list(args), catch_exceptions=False)


def assert_usage_error(result: Result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    for word in words:
        assert word in lines[0]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--http", "localhost:http"], ["--http", "HOST:PORT"]),
        (["--http", "127.0.0.1:70000"], ["--http"]),
        (["--mount", "nothing-to-run"], ["--mount", "PREFIX=COMMAND"]),
        (["--mount", "x="], ["--mount"]),
        (["--mount", "x=cmd 'unclosed"], ["--mount"]),
        (["--pin", "add"], ["--pin", "--lazy"]),
        (["--tools", "no_such_module_here:registry"], ["--tools", "no_such_module_here"]),
        (["--log-level", "loud"], ["--log-level"]),
        (["--agent", " "], ["--agent"]),
        (["--mount-header", "docs:X-Key=1"], ["--mount-header", "'docs'", "no --mount"]),
        (
            ["--mount", "docs=uvx some-server", "--mount-header", "docs:X-Key=1"],
            ["--mount-header", "stdio"],
        ),
        (
            ["--mount", "docs=http://127.0.0.1:9/mcp", "--mount-header", "docs:X-Key"],
            ["--mount-header", "PREFIX:NAME=VALUE"],
        ),
        (
            ["--mount", "d=http://127.0.0.1:9/mcp", "--mount-header", "d:Bad Name=1"],
            ["--mount-header", "'Bad Name'", "header name"],
        ),
        (
            [
                "--mount",
                "d=http://127.0.0.1:9/mcp",
                "--mount-header",
                "d:Authorization=Bearer ${SATCHEL_TEST_UNSET_VARIABLE}",
            ],
            ["--mount-header", "SATCHEL_TEST_UNSET_VARIABLE", "not set"],
        ),
    ],
)
def test_a_bad_serve_argument_is_one_line_and_exit_code_2(
    args: list[str], words: list[str]
) -> None:
    assert_usage_error(run("serve", *args), *words)


def test_two_registries_defining_the_same_tool_are_refused() -> None:
    result = run(
        "serve",
        "--tools",
        "satchel.examples:registry",
        "--tools",
        "satchel.examples:build_registry",
    )
    assert_usage_error(result, "'word_count'", "defined by both")


def test_pinning_a_tool_the_catalog_lacks_is_refused() -> None:
    result = run("serve", "--tools", "satchel.examples:registry", "--lazy", "--pin", "nope")
    assert_usage_error(result, "--pin", "'nope'", "word_count")


def test_http_addresses_and_mounts_parse() -> None:
    assert parse_http("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert parse_http("[::1]:0") == ("::1", 0)
    assert parse_http("9000") == ("127.0.0.1", 9000)
    assert parse_mount("git=uvx mcp-server-git --repo 'my repo'") == MountSpec(
        prefix="git", command="uvx", args=("mcp-server-git", "--repo", "my repo")
    )
    assert parse_mount("docs=https://example.com/mcp") == MountSpec(
        prefix="docs", url="https://example.com/mcp"
    )


def test_mount_headers_attach_to_their_url_mount_and_read_the_environment() -> None:
    environ = {"DOCS_TOKEN": "s3cret", "REGION": "eu"}
    assert parse_mount_header("docs:Authorization=Bearer ${DOCS_TOKEN}", environ) == (
        "docs",
        "Authorization",
        "Bearer s3cret",
    )
    assert parse_mount_header("d:X-Where= ${REGION}-${REGION} ", environ) == (
        "d",
        "X-Where",
        "eu-eu",
    )
    assert parse_mount_header("d:X-Literal=a=b:c $HOME", environ)[2] == "a=b:c $HOME"
    mounts = [
        MountSpec(prefix="docs", url="https://example.com/mcp"),
        MountSpec(prefix="git", command="uvx", args=("mcp-server-git",)),
    ]
    attached = attach_headers(
        mounts, ["docs:Authorization=Bearer ${DOCS_TOKEN}", "docs:X-Team=core"], environ
    )
    assert attached[0].headers == (("Authorization", "Bearer s3cret"), ("X-Team", "core"))
    assert attached[1] == mounts[1]


def test_tools_registries_are_served_through_one_view_that_shares_their_tools() -> None:
    from satchel.examples import registry

    single = build_catalog(ServeOptions(tools=("satchel.examples:registry",)))
    assert single.names() == registry.names()
    assert all(single.get(name) is registry.get(name) for name in registry.names())
    assert served_registry(single, ServeOptions()) is single

    merged = build_catalog(
        ServeOptions(
            tools=("satchel.examples:registry", "tests/mcp/servers/extra_tools.py:registry")
        )
    )
    assert merged.names() == ["word_count", "add", "notes", "echo", "shout"]


@pytest.mark.anyio
async def test_lazy_serves_the_meta_tools_and_the_pinned_ones() -> None:
    import anyio
    from mcp import Client

    from satchel.mcp import create_server

    catalog = build_catalog(ServeOptions(tools=("satchel.examples:registry",)))
    served = served_registry(catalog, ServeOptions(lazy=True, pins=("add",)))
    with anyio.fail_after(30):
        async with Client(create_server(served).lowlevel) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            total = await client.call_tool("add", {"a": 1, "b": 2})

    assert names == ["discover_tools", "get_tool_schema", "invoke_tool", "add"]
    assert total.structured_content == {"result": 3}
