"""The real browser of the console tests: Debian's headless Chromium driven by
Selenium, installed by the test setup itself when it is missing.

How the browser is found, in order:

1. ``$SATCHEL_CHROMIUM`` and ``$SATCHEL_CHROMEDRIVER``, if set;
2. else ``/usr/bin/chromium`` and ``/usr/bin/chromedriver`` (Debian's ``chromium`` and
   ``chromium-driver`` packages).

When they are missing and the tests run as root (or may run ``sudo`` without a
password), ``apt-get install -y --no-install-recommends chromium chromium-driver``
installs them (after ``apt-get update`` if the first try fails), under a file lock so
parallel workers install once. Otherwise the tests fail with a message saying so; they
are never skipped. Selenium is
given both paths explicitly, so Selenium Manager never downloads a browser.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

__all__ = ["chrome", "find_browser"]

_PACKAGES = ["chromium", "chromium-driver"]
_LOCK = Path(tempfile.gettempdir()) / "satchel-chromium-install.lock"


def _paths() -> tuple[Path, Path]:
    return (
        Path(os.environ.get("SATCHEL_CHROMIUM", "/usr/bin/chromium")),
        Path(os.environ.get("SATCHEL_CHROMEDRIVER", "/usr/bin/chromedriver")),
    )


def _present() -> bool:
    return all(p.is_file() and os.access(p, os.X_OK) for p in _paths())


def _as_root() -> list[str] | None:
    """How to run a command as root: directly, through ``sudo -n``, or not at all."""
    if os.geteuid() == 0:
        return []
    try:
        sudo = subprocess.run(["sudo", "-n", "true"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return ["sudo", "-n", "env", "DEBIAN_FRONTEND=noninteractive"] if sudo.returncode == 0 else None


def _apt(prefix: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(
        [*prefix, "apt-get", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )


def find_browser() -> tuple[Path, Path]:
    """The Chromium and chromedriver executables, installed first if needed (see the
    module docstring); fails the test with the reason otherwise."""
    if _present():
        return _paths()
    browser, driver = _paths()
    how = (
        f"The console's browser tests need Chromium at {browser} and chromedriver at "
        f"{driver} (set SATCHEL_CHROMIUM / SATCHEL_CHROMEDRIVER to use others), from "
        "Debian's packages: apt-get install chromium chromium-driver."
    )
    prefix = _as_root()
    if prefix is None:
        pytest.fail(
            f"{how} They are missing, and the tests are neither root nor allowed "
            "`sudo -n`, so cannot install them."
        )
    with _LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker installs, the others wait
        if not _present():
            done = _apt(prefix, "install", "-y", "--no-install-recommends", *_PACKAGES)
            if done.returncode != 0:
                _apt(prefix, "update")
                done = _apt(prefix, "install", "-y", "--no-install-recommends", *_PACKAGES)
            if done.returncode != 0 or not _present():
                pytest.fail(f"{how} Installing them failed:\n{done.stderr[-2000:]}")
    return _paths()


def chrome() -> webdriver.Chrome:
    """A headless Chromium, 1280x900, on the executables :func:`find_browser` gives."""
    browser, driver = find_browser()
    options = webdriver.ChromeOptions()
    options.binary_location = str(browser)
    for argument in (
        "--headless=new",
        "--no-sandbox",  # root in a container
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,900",
        "--no-first-run",
        "--disable-extensions",
    ):
        options.add_argument(argument)
    return webdriver.Chrome(options=options, service=Service(executable_path=str(driver)))
