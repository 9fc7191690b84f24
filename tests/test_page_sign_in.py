"""The GM token never reaches a URL: the sign-in form cannot navigate, whenever the GM
presses Enter (before `config.json` or the page's scripts have loaded too), and a token typed
early still signs the GM in once the page is ready."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mqtt_fixtures import free_port
from playwright.sync_api import Page, Request, Route, expect

from tidetower.engine.table import Table
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.runtime import table_link
from tidetower.mqtt.settings import MqttSettings


class Held:
    """Holds the page's requests for one file until released, as a slow network does."""

    def __init__(self, page: Page, name: str) -> None:
        self.routes: list[Route] = []
        self.released = False
        page.route(f"**/{name}", self._hold)

    def _hold(self, route: Route) -> None:
        if self.released:
            route.continue_()
        else:
            self.routes.append(route)

    def release(self) -> None:
        self.released = True
        for route in self.routes:
            route.continue_()


@pytest.fixture
def lan_page(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A LAN table's page (its broker on loopback only): its URL and the GM token."""
    settings = MqttSettings(port=free_port(), ws_port=free_port(), lan=True, bind="127.0.0.1")
    with (
        table_link(Table(tmp_path / "s.db"), settings),
        DisplayServer(settings, port=free_port()) as server,
    ):
        yield server.url, (tmp_path / "gm-token").read_text().strip()


def _urls(page: Page) -> list[str]:
    """Every URL the page asks for, from now on (navigations included)."""
    asked: list[str] = []

    def note(request: Request) -> None:
        asked.append(request.url)

    page.on("request", note)
    return asked


def _type_token_and_press_enter(page: Page, token: str) -> None:
    page.locator("#connection summary").click()
    page.locator("#form-login [name=password]").fill(token)
    page.locator("#form-login [name=password]").press("Enter")


def test_enter_before_config_json_loads_keeps_the_token_out_of_every_url(
    lan_page: tuple[str, str], page: Page
) -> None:
    url, token = lan_page
    asked = _urls(page)
    config = Held(page, "config.json")
    with page.expect_request("**/config.json"):
        page.goto(url)
    entries = page.evaluate("history.length")
    _type_token_and_press_enter(page, token)
    config.release()
    expect(page.locator("#link")).to_have_text("broker online as gm")  # typed early, kept
    assert token not in page.url and all(token not in asked_url for asked_url in asked)
    assert page.evaluate("history.length") == entries  # nothing added to the history


def test_enter_before_the_scripts_load_keeps_the_token_out_of_every_url(
    lan_page: tuple[str, str], page: Page
) -> None:
    url, token = lan_page
    asked = _urls(page)
    scripts = Held(page, "display.js")
    with page.expect_request("**/display.js"):
        page.goto(url, wait_until="commit")
    page.locator("#form-login").wait_for(state="attached")
    entries = page.evaluate("history.length")
    _type_token_and_press_enter(page, token)
    scripts.release()
    expect(page.locator("#link")).to_have_text("broker online")  # a guest until signed in
    assert token not in page.url and all(token not in asked_url for asked_url in asked)
    page.locator("#form-login button").click()  # the GM signs in now the page is ready
    expect(page.locator("#link")).to_have_text("broker online as gm")
    assert page.evaluate("history.length") == entries  # nothing added to the history
