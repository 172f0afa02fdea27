"""The console in a real browser (headless Chromium, see ``browser.py``) against a real
``satchel console`` process; the approvals come from a real ``satchel serve`` process
driven by the MCP SDK client, which then sees its call go ahead or stay refused.
Screenshots of the main pages are saved (``live.artifacts()``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

from satchel.memory import SQLiteStore

from .browser import chrome
from .conftest import HOSTILE, seed
from .live import STARTUP, artifacts, running_console

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

FILE_TOOLS = f"{Path(__file__).parents[1] / 'mcp' / 'servers' / 'file_tools.py'}:registry"
WAIT = 20  # seconds for a page or a poll to show something


@pytest.fixture(scope="module")
def driver() -> Iterator[webdriver.Chrome]:
    browser = chrome()
    try:
        yield browser
    finally:
        browser.quit()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"

    async def main() -> None:
        async with SQLiteStore(path) as store:
            await seed(store)

    anyio.run(main)
    return path


@pytest.fixture
def console(db: Path) -> Iterator[str]:
    with running_console(db) as url:
        yield url


def shot(driver: webdriver.Chrome, name: str) -> Path:
    path = artifacts() / f"{name}.png"
    driver.save_screenshot(str(path))
    assert path.stat().st_size > 0
    return path


def wait(driver: webdriver.Chrome) -> WebDriverWait[webdriver.Chrome]:
    return WebDriverWait(driver, WAIT)


def no_alert(driver: webdriver.Chrome) -> bool:
    try:
        _ = driver.switch_to.alert
    except NoAlertPresentException:
        return True
    return False


def test_open_an_agent_edit_a_block_and_search(
    driver: webdriver.Chrome, console: str, db: Path
) -> None:
    driver.get(f"{console}/agents")
    shot(driver, "agents")
    driver.find_element(By.CSS_SELECTOR, "a.agent-link").click()
    wait(driver).until(ec.text_to_be_present_in_element((By.ID, "agent-name"), "ada"))
    labels = [
        r.get_attribute("data-label") for r in driver.find_elements(By.CSS_SELECTOR, "tr.block-row")
    ]
    assert labels == ["human", "notes", "persona"]
    near = driver.find_element(By.CSS_SELECTOR, 'tr[data-label="notes"] .size')
    assert "near" in (near.get_attribute("class") or "")  # 12 of 14: amber
    shot(driver, "agent")

    driver.find_element(By.LINK_TEXT, "notes").click()
    value = wait(driver).until(ec.presence_of_element_located((By.ID, "edit-value")))
    value.clear()
    value.send_keys("Ada's sister Bea lives in Porto.")
    limit = driver.find_element(By.ID, "edit-limit")
    limit.clear()
    limit.send_keys("60")
    Select(driver.find_element(By.ID, "edit-permission")).select_by_value("append")
    driver.find_element(By.ID, "edit-submit").click()
    wait(driver).until(ec.presence_of_element_located((By.ID, "saved")))
    assert driver.find_element(By.ID, "block-value").text == "Ada's sister Bea lives in Porto."
    assert driver.find_element(By.ID, "block-permission").text == "append"
    shot(driver, "block")

    async def stored() -> Any:
        async with SQLiteStore(db, embedder=None) as store:
            return await store.get_block("ada", "notes")

    driver.get(f"{console}/agents/ada/blocks/notes?a=1#history")
    diff = wait(driver).until(ec.presence_of_element_located((By.ID, "diff")))
    assert "+Ada's sister Bea lives in Porto." in diff.text
    driver.execute_script("document.getElementById('history').scrollIntoView()")
    shot(driver, "history")

    block = anyio.run(stored)
    assert (block.value, block.permission.value, block.char_limit) == (
        "Ada's sister Bea lives in Porto.",
        "append",
        60,
    )

    driver.find_element(By.LINK_TEXT, "Search").click()
    query = wait(driver).until(ec.presence_of_element_located((By.ID, "q")))
    query.send_keys("holiday in Japan")  # no word in common: the vectors find it
    Select(driver.find_element(By.ID, "domain")).select_by_value("archival")
    driver.find_element(By.ID, "search-submit").click()
    hits = wait(driver).until(ec.presence_of_all_elements_located((By.CSS_SELECTOR, "tr.hit")))
    assert "Kyoto in April" in hits[0].text
    shot(driver, "search")

    driver.find_element(By.LINK_TEXT, "Timeline").click()
    wait(driver).until(ec.presence_of_element_located((By.ID, "timeline-day")))
    said = [m.text for m in driver.find_elements(By.CSS_SELECTOR, ".msg pre.value")]
    assert said == ["Book me a ryokan in Kyoto.", "I found three ryokans in Kyoto."]
    shot(driver, "timeline")


def test_a_stored_script_renders_as_text_and_runs_nothing(
    driver: webdriver.Chrome, console: str
) -> None:
    for path in ("/agents/ada", "/agents/ada/blocks/human", "/agents/ada/search?q=tea"):
        driver.get(f"{console}{path}")
        wait(driver).until(ec.presence_of_element_located((By.TAG_NAME, "h1")))
        assert no_alert(driver), path
        assert driver.execute_script("return window.__xss === undefined") is True, path
        assert driver.find_elements(By.CSS_SELECTOR, "main img") == [], path
    driver.get(f"{console}/agents/ada/blocks/human")
    assert HOSTILE in driver.find_element(By.ID, "block-value").text


def _serve(db: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "satchel", "serve", "--db", str(db), "--agent", "ada", "--tools", FILE_TOOLS],
        env=dict(os.environ),
    )


def _error(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error is True, result.content
    assert result.meta is not None
    return result.meta["satchel/error"]


def _decide(driver: webdriver.Chrome, approval_id: str, button: str) -> None:
    """Wait for the request to appear in the open inbox (no reload), then click."""
    card = wait(driver).until(ec.presence_of_element_located((By.ID, f"request-{approval_id}")))
    card.find_element(By.CSS_SELECTOR, f"button.{button}").click()
    wait(driver).until(ec.invisibility_of_element_located((By.ID, f"request-{approval_id}")))


@pytest.mark.anyio
async def test_approve_one_pending_call_and_deny_another_from_a_running_serve(
    driver: webdriver.Chrome, console: str, db: Path, tmp_path: Path
) -> None:
    kept, removed = tmp_path / "kept.txt", tmp_path / "removed.txt"
    for path in (kept, removed):
        path.write_text("x")
    driver.get(f"{console}/approvals")
    wait(driver).until(ec.presence_of_element_located((By.ID, "no-pending")))
    with anyio.fail_after(STARTUP + 120):
        async with Client(_serve(db), mode="legacy") as agent:
            asked = _error(await agent.call_tool("delete_file", {"path": str(removed)}))
            assert asked["kind"] == "needs_approval"
            approve_id = asked["details"]["approval_id"]
            card = wait(driver).until(
                ec.presence_of_element_located((By.ID, f"request-{approve_id}"))
            )
            assert str(removed) in card.find_element(By.CSS_SELECTOR, "pre.args").text
            assert "mcp" in card.text
            shot(driver, "approvals")
            _decide(driver, approve_id, "approve-once")
            ran = await agent.call_tool(
                "delete_file", {"path": str(removed), "approval_id": approve_id}
            )
            assert ran.is_error is not True, ran.content
            assert not removed.exists()

            refused = _error(await agent.call_tool("delete_file", {"path": str(kept)}))
            deny_id = refused["details"]["approval_id"]
            _decide(driver, deny_id, "deny")
            after = _error(
                await agent.call_tool("delete_file", {"path": str(kept), "approval_id": deny_id})
            )
            assert after["kind"] == "denied"
            assert kept.exists()
    outcomes = {
        row.get_attribute("data-id"): row.find_element(By.CSS_SELECTOR, ".outcome").text
        for row in driver.find_elements(By.CSS_SELECTOR, "tr.decided")
    }
    assert outcomes[deny_id].startswith("denied")
    assert outcomes[approve_id].startswith(("used", "approved"))
    shot(driver, "approvals-decided")


def test_with_a_token_the_browser_logs_in_first(driver: webdriver.Chrome, db: Path) -> None:
    with running_console(db, "--token", "correct horse") as url:
        driver.get(f"{url}/agents/ada")
        token = wait(driver).until(ec.presence_of_element_located((By.ID, "token")))
        shot(driver, "login")
        token.send_keys("wrong")
        driver.find_element(By.ID, "login-submit").click()
        wait(driver).until(ec.presence_of_element_located((By.ID, "login-failed")))
        driver.find_element(By.ID, "token").send_keys("correct horse")
        driver.find_element(By.ID, "login-submit").click()
        wait(driver).until(ec.text_to_be_present_in_element((By.ID, "agent-name"), "ada"))
        cookie = driver.get_cookie("satchel_console")
        assert cookie is not None
        assert cookie["httpOnly"] is True
        assert cookie["sameSite"] == "Strict"
        assert driver.execute_script("return document.cookie") == ""
    driver.delete_all_cookies()
