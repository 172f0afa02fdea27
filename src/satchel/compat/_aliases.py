"""The seeds' argument forms and catalog names that satchel accepts, as data: what
docs/compat.md lists and the tests check (each is accepted, none is in a default
schema). The tools themselves accept them (their input models normalise them at
validation), with or without a profile."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["SEED_ALIASES", "SeedAlias"]


@dataclass(frozen=True, kw_only=True, slots=True)
class SeedAlias:
    """One form a seed uses where satchel uses another.

    Attributes:
        seed: The seed document it comes from (``"000"``, ``"002"``, ``"004"``).
        system: The tool system (``"Pattern"`` or ``"AgenticPal"``).
        tool: The satchel tool (or ``discover_tools`` for a catalog name).
        operation: The operation it applies to, for a multi-operation tool.
        kind: ``operation`` (an operation's name), ``field`` (an argument's name),
            ``value`` (an argument's value), ``list`` (a list where satchel takes
            comma-separated text), ``category`` or ``action`` (a catalog filter).
        seed_form: What the seed sends.
        satchel_form: What satchel reads it as.
    """

    seed: Literal["000", "002", "004"]
    system: Literal["Pattern", "AgenticPal"]
    tool: str
    operation: str | None
    kind: Literal["operation", "field", "value", "list", "category", "action"]
    seed_form: str
    satchel_form: str


def _p(
    seed: Literal["000", "002"],
    tool: str,
    operation: str | None,
    kind: str,
    seed_form: str,
    satchel_form: str,
) -> SeedAlias:
    return SeedAlias(
        seed=seed,
        system="Pattern",
        tool=tool,
        operation=operation,
        kind=kind,  # pyright: ignore[reportArgumentType]
        seed_form=seed_form,
        satchel_form=satchel_form,
    )


def _a(tool: str, kind: str, seed_form: str, satchel_form: str) -> SeedAlias:
    return SeedAlias(
        seed="004",
        system="AgenticPal",
        tool=tool,
        operation=None,
        kind=kind,  # pyright: ignore[reportArgumentType]
        seed_form=seed_form,
        satchel_form=satchel_form,
    )


SEED_ALIASES: Final[tuple[SeedAlias, ...]] = (
    _p("000", "context", None, "operation", "Append", "append"),
    _p("000", "context", None, "operation", "LoadFromArchival", "load"),
    _p("000", "context", None, "operation", "load_from_archival", "load"),
    _p("000", "context", "append", "field", "value", "content"),
    _p("000", "context", "swap", "field", "archive", "archive_label"),
    _p("000", "context", "swap", "field", "load", "load_label"),
    _p("000", "recall", None, "operation", "Insert", "insert"),
    _p("000", "recall", "insert", "field", "value", "content"),
    _p("000", "recall", "append", "field", "value", "content"),
    _p("000", "send_message", None, "value", "target.type User", "target.type user"),
    _p("002", "send_message", None, "field", "message", "content (target: user)"),
    _a("send_email", "list", "to", "to"),
    _a("send_email", "list", "cc", "cc"),
    _a("discover_tools", "category", "gmail", "email"),
    _a("discover_tools", "action", "list", "read, on a list_ tool"),
    _a("discover_tools", "action", "write", "any tool that is not read-only"),
    _a("discover_tools", "action", "create", "send"),
)
"""Every seed form satchel accepts (docs/compat.md, "Argument forms")."""
