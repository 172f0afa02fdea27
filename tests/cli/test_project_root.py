"""``satchel serve --project-root``: what the option's value becomes."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import typer

from satchel.cli._serve_command import fallback_root


def test_a_relative_folder_is_made_absolute_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app").mkdir()
    monkeypatch.chdir(tmp_path)

    assert fallback_root(".") == str(tmp_path)
    assert fallback_root("app") == str(tmp_path / "app")
    assert fallback_root(f"  {tmp_path / 'app'} ") == str(tmp_path / "app")
    assert fallback_root("file:///srv/app") == "file:///srv/app"
    assert fallback_root(None) is None


def test_home_top_and_unexpanded_values_are_no_project(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.INFO, logger="satchel.cli.serve"):
        assert fallback_root(str(Path.home())) is None
        assert fallback_root("~") is None
        assert fallback_root("/") is None
        assert fallback_root("${workspaceFolder}") is None
    assert "was not expanded by the client" in caplog.text
    assert "not a project" in caplog.text


def test_an_empty_value_is_a_usage_error() -> None:
    with pytest.raises(typer.BadParameter, match="must not be empty"):
        fallback_root("  ")
