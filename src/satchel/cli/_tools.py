"""``satchel tools``: list, describe and call the tools of any registry."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Generator
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from satchel._counts import counted
from satchel._errors import SatchelUsageError
from satchel.cli._common import (
    DEFAULT_TOOLS,
    JsonFlag,
    ToolsOption,
    echo_json,
    load_registry,
    stdout_console,
)
from satchel.registry import BaseRegistry
from satchel.registry._versions import version_alias
from satchel.schema import DIALECTS, Dialect, tool_definition
from satchel.tools import ToolContext, ToolResult, ToolSpec

__all__ = ["app"]

app = typer.Typer(
    name="tools",
    help="List, describe and call the tools of a registry.",
    no_args_is_help=True,
)


def _flags(spec: ToolSpec) -> str:
    flags: list[str] = []
    if not spec.is_write:
        flags.append("read-only")
    if spec.annotations.destructive is True:
        flags.append("destructive")
    else:
        ops = [op.name for op in spec.operations.values() if op.annotations.destructive is True]
        if ops:
            flags.append(f"destructive: {', '.join(ops)}")
    return "\n".join(flags)


def _entry(spec: ToolSpec) -> dict[str, Any]:
    data = spec.model_dump(mode="json", exclude={"input_schema", "output_schema"})
    data["read_only"] = not spec.is_write
    data["destructive"] = spec.is_destructive()
    return data


def _find(registry: BaseRegistry, name: str, tools: str) -> int:
    names = registry.names()
    if name in names:
        return names.index(name)
    close = registry.suggest(name)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise typer.BadParameter(f"there is no tool {name!r} in {tools}.{hint}", param_hint="'NAME'")


@app.command("list")
def list_tools(tools: ToolsOption = DEFAULT_TOOLS, as_json: JsonFlag = False) -> None:
    """List every tool: its name, category, actions, read-only and destructive flags,
    and summary."""
    registry = load_registry(tools)
    specs = registry.specs()
    if as_json:
        echo_json([_entry(spec) for spec in specs])
        return
    console = stdout_console()
    if not specs:
        console.print(f"No tools in {tools}.")
        return
    table = Table(title=f"{counted(len(specs), 'tool')} in {tools}", title_justify="left")
    table.add_column("Tool", no_wrap=True, style="bold")
    table.add_column("Category")
    table.add_column("Actions")
    table.add_column("Flags", min_width=12, style="yellow")
    table.add_column("Summary", ratio=1)
    for spec in specs:
        table.add_row(
            Text(spec.name),
            Text(spec.category or ""),
            Text(", ".join(spec.actions)),
            Text(_flags(spec)),
            Text(spec.summary),
        )
    console.print(table)


@app.command("schema")
def schema(
    name: Annotated[
        str | None, typer.Argument(metavar="NAME", help="The tool; leave it out for every tool.")
    ] = None,
    tools: ToolsOption = DEFAULT_TOOLS,
    dialect: Annotated[
        str,
        typer.Option(
            "--dialect",
            "-d",
            metavar="|".join(DIALECTS),
            help="The provider whose tool-definition shape to print.",
        ),
    ] = "openai",
) -> None:
    """Print a tool's definition (or every tool's) as JSON, in a provider's own shape."""
    chosen = _dialect(dialect)
    registry = load_registry(tools)
    if name is None:
        echo_json(registry.schemas(chosen))
        return
    tool = registry.get(name)  # also `name@1` and `name_v1`
    if tool is None:
        _find(registry, name, tools)
        return
    listed = _listed_name(registry, tool.spec)
    with _quiet(logging.getLogger("satchel.registry")):  # the reason is the error below
        found = registry.schemas(chosen, versions="all")
    for definition in found:
        if _definition_name(definition) == listed:
            echo_json(definition)
            return
    try:
        tool_definition(listed, tool.spec.description, tool.spec.input_schema, chosen)
        reason = "it is left out of the registry's definitions"
    except SatchelUsageError as exc:
        reason = exc.message
    raise typer.BadParameter(
        f"the tool {name!r} cannot be written in the {chosen} dialect: {reason}",
        param_hint="'NAME'",
    )


@contextlib.contextmanager
def _quiet(logger: logging.Logger) -> Generator[None]:
    """Hold back ``logger``'s warnings for the block."""
    before = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = before


def _listed_name(registry: BaseRegistry, spec: ToolSpec) -> str:
    """The name a definition lists ``spec`` under: its own for the default version,
    ``name_v1`` for another (as :meth:`ToolRegistry.schemas` writes it)."""
    if spec.version is None or registry.default_version(spec.name) == spec.version:
        return spec.name
    return version_alias(spec.name, spec.version)


def _definition_name(definition: dict[str, Any]) -> object:
    """A definition's tool name, in any dialect's shape (OpenAI nests it in
    ``function``)."""
    inner = definition.get("function")
    if isinstance(inner, dict) and "name" in inner:
        return inner["name"]  # pyright: ignore[reportUnknownVariableType]
    return definition.get("name")


def _dialect(value: str) -> Dialect:
    for dialect in DIALECTS:
        if value.lower() == dialect:
            return dialect
    choices = ", ".join(DIALECTS)
    raise typer.BadParameter(
        f"{value!r} is not a dialect; choose one of {choices}.", param_hint="'--dialect'"
    )


def _arguments(text: str) -> dict[str, Any]:
    if text == "-":
        text = sys.stdin.read()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(
            f"not valid JSON ({exc.msg} at column {exc.colno}); pass one JSON object, such "
            """as '{"a": 1}'.""",
            param_hint="'ARGS_JSON'",
        ) from None
    if not isinstance(value, dict):
        raise typer.BadParameter(
            f"must be a JSON object of named arguments, not {type(value).__name__}.",
            param_hint="'ARGS_JSON'",
        )
    return value  # pyright: ignore[reportUnknownVariableType]


def _print_result(result: ToolResult) -> None:
    if result.error is not None:
        typer.secho(result.to_text(), fg=typer.colors.RED)
        return
    if isinstance(result.output, str):
        typer.echo(result.output)
    else:
        echo_json(result.to_dict()["output"])
    if result.notice:
        typer.secho(f"Notice: {result.notice}", fg=typer.colors.YELLOW, err=True)
    if result.coerced:
        typer.echo(f"(decoded JSON text in: {', '.join(result.coerced)})", err=True)


@app.command("call")
def call(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The tool to call.")],
    args_json: Annotated[
        str,
        typer.Argument(
            metavar="ARGS_JSON", help="The arguments as one JSON object; `-` reads stdin."
        ),
    ] = "{}",
    tools: ToolsOption = DEFAULT_TOOLS,
    as_json: JsonFlag = False,
) -> None:
    """Call a tool and print its result. Exits 1 when the result is an error."""
    registry = load_registry(tools)
    if registry.get(name) is None:  # `name@1` calls an older version
        _find(registry, name, tools)
    arguments = _arguments(args_json)
    result = registry.call_sync(name, arguments, ToolContext(origin="cli"))
    if as_json:
        typer.echo(result.to_json())
    else:
        _print_result(result)
    if not result.ok:
        raise typer.Exit(1)
