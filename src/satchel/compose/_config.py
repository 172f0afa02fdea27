"""Chains written in a config file (TOML, YAML or JSON), loaded into a registry.

The same shape in each format: a list ``chains``, each with ``name``, ``description``
and ``steps``; a step is a tool name or a table with ``tool``, ``id``, ``map``,
``when`` (a JMESPath condition), ``on_error`` (``"stop"``, ``"skip"`` or
``{fallback = "tool"}``), ``over``, ``limit``, ``max_items`` and ``after``::

    [[chains]]
    name = "triage"
    description = "Fetch a ticket, classify it, and escalate it when urgent."

    [[chains.steps]]
    tool = "fetch_ticket"

    [[chains.steps]]
    tool = "classify"
    map = { text = "body" }

    [[chains.steps]]
    tool = "escalate"
    when = "label == 'urgent'"
    on_error = { fallback = "notify" }
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from satchel._errors import SatchelUsageError
from satchel.compose._conditions import Expr
from satchel.compose._steps import DEFAULT_LIMIT, MAX_ITEMS, Fallback, Step, step
from satchel.tools import BaseTool, ToolOptions

if TYPE_CHECKING:
    from satchel.compose._chain import ChainTool
    from satchel.registry import ToolRegistry

__all__ = ["ChainConfig", "ChainsFile", "StepConfig", "chain_to_config", "load_chains"]


class FallbackConfig(BaseModel):
    """``on_error = {fallback = "tool"}``."""

    model_config = ConfigDict(extra="forbid")

    fallback: str


class StepConfig(BaseModel):
    """One step of a chain in a config file (see :class:`~satchel.compose.Step`)."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    id: str | None = None
    map: dict[str, str] = Field(default_factory=dict[str, str])
    when: str | None = None
    on_error: Literal["stop", "skip"] | FallbackConfig = "stop"
    over: str | None = None
    limit: int = Field(default=DEFAULT_LIMIT, ge=1)
    max_items: int = Field(default=MAX_ITEMS, ge=1)
    after: list[str] = Field(default_factory=list[str])

    def to_step(self) -> Step:
        """The library's :class:`~satchel.compose.Step`."""
        on_error = self.on_error
        return step(
            self.tool,
            id=self.id,
            map=self.map,
            when=self.when,
            on_error=Fallback(on_error.fallback)
            if isinstance(on_error, FallbackConfig)
            else on_error,
            over=self.over,
            limit=self.limit,
            max_items=self.max_items,
            after=self.after,
        )


class ChainConfig(BaseModel):
    """One chain in a config file (see :func:`~satchel.chain`)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    steps: list[str | StepConfig] = Field(min_length=1)
    output: list[str] | None = None
    concurrent: bool = False
    summary: str | None = None
    usage_rule: str | None = None
    category: str | None = None
    version: str | None = None
    deprecated: str | None = None

    def build(self, registry: ToolRegistry) -> ChainTool:
        """The chain, its steps looked up (and checked) in ``registry``."""
        from satchel.compose._chain import chain

        options = ToolOptions()
        for key in ("summary", "usage_rule", "category", "version", "deprecated"):
            value = getattr(self, key)
            if value is not None:
                options[key] = value
        steps = [step(s) if isinstance(s, str) else s.to_step() for s in self.steps]
        return chain(
            self.name,
            *steps,
            description=self.description,
            output=self.output,
            concurrent=self.concurrent,
            registry=registry,
            **options,
        )


class ChainsFile(BaseModel):
    """A config file of chains."""

    model_config = ConfigDict(extra="forbid")

    chains: list[ChainConfig] = Field(default_factory=list[ChainConfig])


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SatchelUsageError(f"Cannot read the chains file {str(path)!r}: {exc}") from exc
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            return tomllib.loads(text)
        if suffix in (".yaml", ".yml"):
            return yaml.safe_load(text)
        if suffix == ".json":
            return json.loads(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError, json.JSONDecodeError) as exc:
        raise SatchelUsageError(
            f"The chains file {str(path)!r} is not valid {suffix[1:].upper()}: {exc}"
        ) from exc
    raise SatchelUsageError(
        f"The chains file {str(path)!r} must end in .toml, .yaml, .yml or .json."
    )


def load_chains(
    source: str | Path | Mapping[str, Any], registry: ToolRegistry, *, replace: bool = False
) -> list[ChainTool]:
    """Read chains from a file (or already-parsed data) and register them, in order
    (a chain may use one defined above it).

    Raises:
        SatchelUsageError: the file cannot be read or parsed, a key is unknown, or a
            chain does not check (the message names the chain, step and field).

    Example:
        >>> load_chains("chains.toml", registry)
        [<ChainTool 'triage' (3 steps)>]
    """
    data = source if isinstance(source, Mapping) else _read(Path(source))
    where = "the chains data" if isinstance(source, Mapping) else repr(str(source))
    try:
        parsed = ChainsFile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:10]
        )
        raise SatchelUsageError(f"{where} is not a valid chains file: {problems}") from None
    made: list[ChainTool] = []
    for config in parsed.chains:
        built = config.build(registry)
        registry.register(built, replace=replace)
        made.append(built)
    return made


def _tool_name(tool: object, chain: str) -> str:
    if isinstance(tool, str):
        return tool
    if isinstance(tool, BaseTool):
        return tool.spec.name
    raise SatchelUsageError(
        f"Chain {chain!r} has a step given as a function; register it and name it to "
        "write the chain as config."
    )


def chain_to_config(tool: ChainTool) -> dict[str, Any]:
    """A chain as the plain data :func:`load_chains` reads (one entry of ``chains``).

    Raises:
        SatchelUsageError: a step has a Python predicate, or a tool given as a function.
    """
    steps: list[dict[str, Any]] = []
    for s in tool.steps:
        entry: dict[str, Any] = {"tool": _tool_name(s.tool, tool.name)}
        if s.id:
            entry["id"] = s.id
        if s.map:
            entry["map"] = dict(s.map)
        if isinstance(s.when, Expr):
            entry["when"] = s.when.text
        elif s.when is not None:
            raise SatchelUsageError(
                f"Chain {tool.name!r}: a Python predicate has no config form; write the "
                "condition as a JMESPath expression."
            )
        if isinstance(s.on_error, Fallback):
            entry["on_error"] = {"fallback": _tool_name(s.on_error.tool, tool.name)}
        elif s.on_error != "stop":
            entry["on_error"] = s.on_error
        if s.over:
            entry["over"] = s.over
        if s.limit != DEFAULT_LIMIT:
            entry["limit"] = s.limit
        if s.max_items != MAX_ITEMS:
            entry["max_items"] = s.max_items
        if s.after:
            entry["after"] = list(s.after)
        steps.append(entry)
    out: dict[str, Any] = {"name": tool.name, "description": tool.description, "steps": steps}
    if tool.output is not None:
        out["output"] = list(tool.output)
    if tool.concurrent:
        out["concurrent"] = True
    for key in ("summary", "usage_rule", "category", "version", "deprecated"):
        value = tool.options.get(key)
        if value is not None:
            out[key] = value
    return out
