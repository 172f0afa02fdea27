"""``satchel install systemd``: a systemd user unit that keeps ``satchel up`` running
across logouts and reboots.

The unit (``$XDG_CONFIG_HOME/systemd/user/satchel-up.service``) runs the absolute
``satchel`` of this installation with ``up`` and the arguments given, restarts it on
failure, and reads the secrets from an environment file (mode 0600, beside satchel's
other configuration), never from the unit itself, which any local user may read. A
``--db`` URL with a password goes to that file as ``SATCHEL_DB``, for the same reason.

ExecStart words are quoted as systemd.service(5) says ("Command lines"): double quotes
with C escapes, ``%`` doubled (specifiers) and ``$`` doubled (variable expansion).
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

import typer

__all__ = [
    "UNIT_NAME",
    "default_env_file",
    "default_unit_path",
    "install_systemd",
    "systemd_quote",
    "systemd_unit",
    "up_args",
]

UNIT_NAME: Final = "satchel-up.service"
"""The unit's file name."""

_PLAIN: Final = re.compile(r"^[A-Za-z0-9_@+=:,./-]+$")
_ENV_NAME: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _config_home(environ: Mapping[str, str]) -> Path:
    configured = environ.get("XDG_CONFIG_HOME", "")
    if configured and Path(configured).is_absolute():
        return Path(configured)
    return Path(environ.get("HOME") or Path.home()) / ".config"


def default_unit_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where systemd looks for a user's own units: ``$XDG_CONFIG_HOME/systemd/user/``."""
    return _config_home(os.environ if environ is None else environ) / "systemd/user" / UNIT_NAME


def default_env_file(environ: Mapping[str, str] | None = None) -> Path:
    """Where the unit's secrets are kept: ``$XDG_CONFIG_HOME/satchel/satchel-up.env``."""
    return _config_home(os.environ if environ is None else environ) / "satchel/satchel-up.env"


def systemd_quote(word: str) -> str:
    """``word`` as one word of a systemd command line (``ExecStart=``)."""
    if "\x00" in word:
        raise typer.BadParameter(f"{word!r} holds a NUL byte, which no command line can.")
    escaped = word.replace("%", "%%").replace("$", "$$")
    if _PLAIN.match(word):
        return escaped
    for plain, code in (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\t", "\\t"), ("\r", "\\r")):
        escaped = escaped.replace(plain, code)
    return f'"{escaped}"'


def _has_password(url: str) -> bool:
    try:
        return urlsplit(url).password is not None
    except ValueError:
        return True  # unparseable: treat as secret rather than print it


def up_args(
    *,
    model: str | None = None,
    base_url: str | None = None,
    channels: Path | None = None,
    db: str | None = None,
    agent: str | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """``up`` and its options, with paths made absolute (the service's working
    directory is not this one) and a ``--db`` URL that holds a password left out (it
    goes to the environment file as ``SATCHEL_DB``)."""
    args = ["up"]
    if model is not None:
        args += ["--model", model]
    if base_url is not None:
        args += ["--base-url", base_url]
    if channels is not None:
        args += ["--channels", str(channels.expanduser().absolute())]
    if db is not None and not _has_password(db):
        if "://" not in db or db.startswith("sqlite:///"):
            db = str(Path(db.removeprefix("sqlite:///")).expanduser().absolute())
        args += ["--db", db]
    if agent is not None:
        args += ["--agent", agent]
    return [*args, *extra]


def systemd_unit(command: Sequence[str], env_file: Path) -> str:
    """The unit file that runs ``command`` (absolute) with the secrets of ``env_file``."""
    exec_start = " ".join(systemd_quote(word) for word in command)
    return (
        "# Written by `satchel install systemd`; run it again to change it.\n"
        "# No secrets here: they are in the EnvironmentFile below (mode 0600).\n"
        "[Unit]\n"
        "Description=satchel up: the agent, listening on its channels\n"
        "Wants=network-online.target\n"
        "After=network-online.target\n"
        "\n"
        "[Service]\n"
        "Type=exec\n"
        f"ExecStart={exec_start}\n"
        f"EnvironmentFile={str(env_file).replace('%', '%%')}\n"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def _env_line(name: str, value: str) -> str:
    if "\n" in value or "\x00" in value:
        raise typer.BadParameter(
            f"${name} holds a line break, which an environment file cannot.",
            param_hint="'--secret'",
        )
    quoted = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'{name}="{quoted}"\n'


def _write_env_file(path: Path, values: Mapping[str, str]) -> bool:
    """Create or update ``path`` (mode 0600) with ``values``; ``True`` when an existing
    file was readable by others and was tightened."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lines: list[str] = []
    loose = False
    if path.exists():
        loose = bool(path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO))
        kept = path.read_text(encoding="utf-8").splitlines(keepends=True)
        lines = [line for line in kept if line.split("=", 1)[0].strip() not in values]
    else:
        lines = [
            "# Secrets for satchel-up.service (SATCHEL_TELEGRAM_TOKEN, SATCHEL_INBOX_TOKEN,\n",
            "# OPENAI_API_KEY, ...), one NAME=value a line; keep this file mode 0600.\n",
        ]
    lines += [_env_line(name, value) for name, value in values.items()]
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.writelines(lines)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return loose


def _write_unit(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def install_systemd(
    command: Sequence[str],
    *,
    unit_path: Path | None = None,
    env_file: Path | None = None,
    secrets: Sequence[str] = (),
    db: str | None = None,
    show_only: bool = False,
    remove: bool = False,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Write (or with ``show_only`` print, or with ``remove`` delete) the user unit
    that runs ``command`` (``satchel up ...``, absolute), and say what to run next.

    Args:
        command: The service's command line.
        unit_path: The unit file (default :func:`default_unit_path`).
        env_file: The secrets' file (default :func:`default_env_file`).
        secrets: Environment variables whose current values go into ``env_file``.
        db: The ``--db`` given: a URL with a password goes into ``env_file`` as
            ``SATCHEL_DB`` (``command`` already leaves it out).
        show_only: Print the unit and write nothing.
        remove: Delete the unit instead (the environment file is kept).
        environ: Where ``secrets`` are read (default ``os.environ``).

    Raises:
        typer.BadParameter: A secret's variable is unset or not a name.
    """
    env = os.environ if environ is None else environ
    unit = (unit_path or default_unit_path(env)).expanduser().absolute()
    env_path = (env_file or default_env_file(env)).expanduser().absolute()
    name = unit.name
    if remove:
        if not unit.exists():
            typer.echo(f"There is no unit {unit}; nothing to do.")
            return
        typer.echo(f"Stop it first: systemctl --user disable --now {name}")
        if not show_only:
            unit.unlink()
            typer.echo(f"Removed {unit} (the secrets in {env_path} are kept).")
            typer.echo("Then: systemctl --user daemon-reload")
        return
    values: dict[str, str] = {}
    for variable in secrets:
        if not _ENV_NAME.match(variable):
            raise typer.BadParameter(
                f"{variable!r} is not an environment variable's name.", param_hint="'--secret'"
            )
        if not env.get(variable):
            raise typer.BadParameter(
                f"${variable} is not set here, so there is nothing to keep.",
                param_hint="'--secret'",
            )
        values[variable] = env[variable]
    if db is not None and _has_password(db):
        values["SATCHEL_DB"] = db
    text = systemd_unit(command, env_path)
    if show_only:
        typer.echo(f"Would write {unit} (nothing written):", err=True)
        typer.echo(text, nl=False)
        if values:
            shown = ", ".join(sorted(values))
            typer.echo(f"and keep {shown} in {env_path} (mode 0600).", err=True)
        return
    loose = _write_env_file(env_path, values)
    _write_unit(unit, text)
    typer.echo(f"Wrote {unit}.")
    kept = f" ({', '.join(sorted(values))} written)" if values else ""
    typer.echo(f"Secrets are read from {env_path}, mode 0600{kept}.")
    if loose:
        typer.echo("That file was readable by others; it is now yours alone.")
    typer.echo("Put the secrets satchel up needs there, then run:")
    typer.echo("  systemctl --user daemon-reload")
    typer.echo(f"  systemctl --user enable --now {name}")
    typer.echo("  loginctl enable-linger   # keep it running when you log out, start it at boot")
    typer.echo(f"  journalctl --user -u {name} -f   # its log")
