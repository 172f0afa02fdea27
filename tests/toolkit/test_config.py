"""ToolkitConfig: flags over environment over file over defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from satchel._errors import SatchelUsageError
from satchel.toolkit import CONFIG_FILE_ENV, ToolkitConfig, default_data_dir


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("TIMEZONE", "CALENDAR_URL", "DATA_DIR", "TOOLKIT_CONFIG"):
        monkeypatch.delenv(f"SATCHEL_{name}", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))


def test_defaults_put_data_in_satchels_data_dir() -> None:
    config = ToolkitConfig.load()
    assert config.data_dir == default_data_dir()
    assert config.calendar_url is None


def test_flags_beat_environment_which_beats_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "toolkit.toml"
    file.write_text(
        'timezone = "Asia/Tokyo"\ncalendar_url = "http://file/"\ncalendar_name = "work"\n'
    )
    monkeypatch.setenv(CONFIG_FILE_ENV, str(file))
    monkeypatch.setenv("SATCHEL_CALENDAR_URL", "http://env/")
    config = ToolkitConfig.load(timezone="Europe/Paris", calendar_name=None)
    assert config.timezone == "Europe/Paris"
    assert config.calendar_url == "http://env/"
    assert config.calendar_name == "work"


def test_zone_defaults_to_the_machines_zone() -> None:
    from tzlocal import get_localzone_name

    assert ToolkitConfig.load().zone().key == (get_localzone_name() or "UTC")


def test_an_unknown_zone_is_a_usage_error() -> None:
    with pytest.raises(SatchelUsageError, match="IANA"):
        ToolkitConfig.load(timezone="Mars/Olympus")


def test_an_unknown_key_in_the_file_is_a_usage_error(tmp_path: Path) -> None:
    file = tmp_path / "toolkit.toml"
    file.write_text('calender_url = "http://typo/"\n')
    with pytest.raises(SatchelUsageError, match="calender_url"):
        ToolkitConfig.load(file)


def test_a_file_that_is_not_toml_is_a_usage_error(tmp_path: Path) -> None:
    file = tmp_path / "toolkit.toml"
    file.write_text("timezone = \n")
    with pytest.raises(SatchelUsageError, match="not TOML"):
        ToolkitConfig.load(file)
