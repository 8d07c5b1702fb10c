"""A real browser through `toolkit preview`: headless Chromium (Debian's `chromium` and `chromium-driver`, which
`.ci/browser` installs in CI) renders examples/sales.py's page as a host would, the page shows the tool's result, and
its own call of an app-only tool comes back from the server.

With TOOLKIT_SCREENSHOTS=docs/img the screenshot of the rendered page is written there (docs/img/apps-preview.png,
shown in docs/apps.md); otherwise to the test's own folder. In CI (CI set) a missing browser fails the test: it must
never be skipped there.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from preview_process import TIMEOUT, preview

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root, where Chromium's own sandbox cannot start
    "--disable-gpu",
    "--disable-background-networking",  # no network at all: nothing of Google's is fetched
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=900,640",
)


def _browser() -> tuple[str, str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        message = "Chromium and chromedriver are needed: apt-get install -y chromium chromium-driver (.ci/browser)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return chromium, driver


@pytest.fixture
def chromium(tmp_path: Path) -> Any:
    """A headless Chromium driven by selenium through Debian's chromedriver, with a profile of its own."""
    binary, driver_path = _browser()
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    try:
        yield driver
    finally:
        driver.quit()


def test_chromium_renders_the_tools_page_and_the_pages_own_call_comes_back(chromium: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(chromium, TIMEOUT)
    with preview(EXAMPLES / "sales.py", tmp_path) as url:
        chromium.get(f"{url}?tool=sales_report&arguments={quote(json.dumps({'region': 'all'}))}")
        log = chromium.find_element(By.ID, "log")
        wait.until(lambda _: "sales_report answered" in log.text or chromium.find_elements(By.CSS_SELECTOR, ".error"))
        assert "sales_report answered" in log.text, log.text  # else the host page says what failed
        chromium.switch_to.frame(chromium.find_element(By.ID, "frame"))
        title = chromium.find_element(By.ID, "title")
        wait.until(lambda _: title.text == "Sales: all, 710 units")
        shown = len(chromium.find_elements(By.CSS_SELECTOR, "#rows tr"))
        chromium.find_element(By.CSS_SELECTOR, "button[data-region='north']").click()
        wait.until(lambda _: title.text == "Sales: north, 425 units")
        status = chromium.find_element(By.ID, "status").text
        regions = [cell.text for cell in chromium.find_elements(By.CSS_SELECTOR, "#rows td:nth-child(2)")]
        chromium.switch_to.default_content()
        wait.until(lambda _: "region_sales answered" in log.text)
        calls = [line for line in log.text.splitlines() if "tools/call" in line]
        screenshot = Path(os.environ.get("TOOLKIT_SCREENSHOTS") or tmp_path) / "apps-preview.png"
        chromium.save_screenshot(str(screenshot))

    assert shown == 6
    assert status == "From the page's call of region_sales(north)."
    assert regions == ["north", "north", "north"]
    assert calls == ['tools/call region_sales {"region":"north"}']  # the page's call, through the host to the server
    assert screenshot.read_bytes().startswith(b"\x89PNG")
