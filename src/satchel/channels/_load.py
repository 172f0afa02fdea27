"""Reading the channels file: TOML or YAML, ``${NAME}`` from the environment, the
secrets a section leaves out from ``SATCHEL_*`` variables, and errors that say which
file, which line or field, and what was expected."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, cast

import yaml
from pydantic import ValidationError

from satchel._errors import SatchelUsageError
from satchel.channels._config import ENV_SECRETS, ChannelConfig

__all__ = ["CHANNELS_ENV", "load_channels", "parse_channels"]

CHANNELS_ENV: Final = "SATCHEL_CHANNELS"
"""The environment variable naming the channels file."""

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_MAX_BYTES: Final = 1_000_000


def load_channels(
    path: Path | str | None = None, *, environ: Mapping[str, str] | None = None
) -> ChannelConfig:
    """The channels configuration in ``path`` (default: the file ``$SATCHEL_CHANNELS``
    names; with neither, no channels).

    Args:
        path: A ``.toml`` file, or a ``.yaml``/``.yml`` one.
        environ: Where ``${NAME}`` and the ``SATCHEL_*`` secrets are read (default:
            ``os.environ``).

    Raises:
        SatchelUsageError: The file cannot be read, is not valid TOML or YAML (with the
            line), or holds an unknown key, a bad value or a missing secret (with the
            field and what is expected).

    Example:
        >>> config = load_channels("channels.toml", environ={"SATCHEL_DISCORD_TOKEN": "..."})
    """
    env = os.environ if environ is None else environ
    named = path if path is not None else env.get(CHANNELS_ENV) or None
    if named is None:
        return ChannelConfig()
    where = Path(named).expanduser()
    try:
        with where.open("rb") as file:
            raw = file.read(_MAX_BYTES + 1)
    except OSError as exc:
        raise SatchelUsageError(
            f"Cannot read the channels file {where}: {exc.strerror or exc}."
        ) from exc
    if len(raw) > _MAX_BYTES:
        raise SatchelUsageError(f"The channels file {where} is over {_MAX_BYTES} bytes.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SatchelUsageError(
            f"The channels file {where} is not UTF-8 text (byte {exc.start})."
        ) from exc
    yaml_file = where.suffix.lower() in (".yaml", ".yml")
    return parse_channels(text, source=str(where), yaml_text=yaml_file, environ=env)


def parse_channels(
    text: str,
    *,
    source: str = "<channels>",
    yaml_text: bool = False,
    environ: Mapping[str, str] | None = None,
) -> ChannelConfig:
    """The configuration in ``text`` (TOML, or YAML with ``yaml_text``); see
    :func:`load_channels`.

    Raises:
        SatchelUsageError: As :func:`load_channels`; ``source`` names the text.
    """
    env = os.environ if environ is None else environ
    data = _parse_yaml(text, source) if yaml_text else _parse_toml(text, source)
    data = _expand(data, env, source, ())
    for (section, key), variable in ENV_SECRETS.items():
        body = data.get(section)
        if isinstance(body, dict) and key not in body:
            value = env.get(variable)
            if not value:
                raise SatchelUsageError(
                    f"{source}: {section}.{key} is missing: set it in the file, or set the "
                    f"environment variable {variable}."
                )
            cast(dict[str, Any], body)[key] = value
    try:
        return ChannelConfig.model_validate(data)
    except ValidationError as exc:
        raise SatchelUsageError(_explain(exc, source, text, yaml_text)) from None


def _parse_toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SatchelUsageError(f"{source} is not valid TOML: {exc}.") from None


def _parse_yaml(text: str, source: str) -> dict[str, Any]:
    try:
        data: Any = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise SatchelUsageError(f"{source} is not valid YAML{line}: {exc.problem}.") from None
    except yaml.YAMLError as exc:
        raise SatchelUsageError(f"{source} is not valid YAML: {exc}.") from None
    except RecursionError:
        raise SatchelUsageError(f"{source} nests too deeply to be a channels file.") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SatchelUsageError(
            f"{source}: expected a mapping of sections (discord, bluesky, webhook, groups), "
            f"got {type(data).__name__}."
        )
    return cast(dict[str, Any], data)


def _expand(value: Any, env: Mapping[str, str], source: str, at: tuple[str, ...]) -> Any:
    """``value`` with every ``${NAME}`` in its strings read from ``env``."""
    if isinstance(value, str):

        def variable(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                field = _field(at)
                raise SatchelUsageError(
                    f"{source}: {field} uses ${{{name}}}, but the environment variable "
                    f"{name} is not set."
                )
            return env[name]

        return _VARIABLE.sub(variable, value)
    if isinstance(value, dict):
        items = cast(dict[Any, Any], value).items()
        return {k: _expand(v, env, source, (*at, str(k))) for k, v in items}
    if isinstance(value, list):
        return [
            _expand(v, env, source, (*at, str(i))) for i, v in enumerate(cast(list[Any], value))
        ]
    return value


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _field(loc: tuple[Any, ...]) -> str:
    """``loc`` as a dotted path; a key that is not plain is quoted (and cut short), so
    the message stays one line."""
    parts = [
        str(part) if isinstance(part, int) or _PLAIN_KEY.match(str(part)) else ascii(str(part)[:40])
        for part in loc
    ]
    return ".".join(parts) or "the file"


def _line_of(text: str, loc: tuple[int | str, ...], yaml_text: bool) -> int | None:
    """The line where the setting at ``loc`` is written, best effort: the first line
    setting its last key after the line that opens its section."""
    keys = [part for part in loc if isinstance(part, str)]
    if not keys:
        return None
    lines = text.splitlines()
    start = 0
    if len(keys) > 1:
        section = re.escape(keys[0])
        opener = rf"^{section}\s*:" if yaml_text else rf"^\s*\[\s*{section}\s*[.\]]"
        start = next((i for i, line in enumerate(lines) if re.match(opener, line)), 0)
    key = re.escape(keys[-1])
    sign = ":" if yaml_text else "="
    setting = rf"(?:^|[\s{{,])[\"']?{key}[\"']?\s*{sign}"
    for number in range(start, len(lines)):
        if re.search(setting, lines[number]) or (
            not yaml_text and len(keys) == 1 and re.match(rf"^\s*\[\s*{key}\s*[.\]]", lines[number])
        ):
            return number + 1
    return None


def _explain(exc: ValidationError, source: str, text: str, yaml_text: bool) -> str:
    """Every problem as ``field (line N): what is expected``, on one line (no input
    values: a secret could be one)."""
    lines: list[str] = []
    for error in exc.errors(include_input=False, include_url=False):
        field = _field(error["loc"])
        line = _line_of(text, error["loc"], yaml_text)
        if line is not None:
            field += f" (line {line})"
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "is not a known setting (check the spelling; see docs/channels.md)"
        elif error["type"] == "missing":
            message = "is required"
        lines.append(f"{field}: {message}")
    return f"{source}: " + "; ".join(lines)
