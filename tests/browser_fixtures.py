"""A real headless Chromium page for the display's tests (Debian's `chromium`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mqtt_fixtures import WAIT
from playwright.sync_api import Error, Page, expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PAGE_WAIT_MS = WAIT * 1000  # expect()'s 5 s default is too short for Chromium on a busy machine


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Page]:
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is not installed: apt-get install -y chromium")
    expect.set_options(timeout=PAGE_WAIT_MS)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        context = browser.new_context(viewport={"width": 390, "height": 844})  # a phone
        page = context.new_page()
        errors: list[Error] = []
        page.on("pageerror", lambda error: errors.append(error))
        yield page
        browser.close()
    assert not errors, f"the page's script failed: {errors}"
