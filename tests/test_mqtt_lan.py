"""LAN play: the embedded broker serves the table's phones, anyone reads, only the GM's token
sends commands; the page finds its broker from where it was served and shows how to join."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from mqtt_fixtures import WAIT, Listener, free_port
from playwright.sync_api import Page, expect

from tidetower.engine.table import Table
from tidetower.mqtt.client import BrokerClient
from tidetower.mqtt.display.join import join_urls, lan_addresses, qr_text
from tidetower.mqtt.display.server import DisplayServer, gm_signs_in
from tidetower.mqtt.lan import GM_USER
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.runtime import table_link
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics


def _lan_settings() -> MqttSettings:
    """A LAN table whose broker listens on loopback only: tests reach nothing else."""
    return MqttSettings(port=free_port(), ws_port=free_port(), lan=True, bind="127.0.0.1")


def _logged(caplog: pytest.LogCaptureFixture, text: str) -> None:
    """Return once a log record says `text` (the broker's and client's own words)."""
    deadline = time.monotonic() + WAIT
    while not any(text in record.getMessage() for record in caplog.records):
        assert time.monotonic() < deadline, f"nothing logged {text!r}"
        time.sleep(0.02)


def test_the_lan_broker_keeps_the_gm_token_and_lets_only_the_gm_command(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    settings, said = _lan_settings(), []
    with table_link(Table(tmp_path / "s.db"), settings, announce=said.append) as publisher:
        token_file = tmp_path / "gm-token"
        token = token_file.read_text().strip()
        assert token_file.stat().st_mode & 0o777 == 0o600
        assert "for the LAN" in said[0] and "commands need the GM token" in said[0]
        assert token in said[1] and str(token_file) in said[1]
        _only_the_gm_moves_the_tide(publisher, settings, token_file)
    with table_link(Table(tmp_path / "s.db"), settings, announce=said.append):
        assert token_file.read_text().strip() == token  # kept across starts
    assert all(token not in record.getMessage() for record in caplog.records)


def test_a_broker_bound_beyond_loopback_without_lan_still_guards_the_commands(
    tmp_path: Path,
) -> None:
    settings, said = MqttSettings(port=free_port(), ws_port=free_port(), bind="0.0.0.0"), []
    with table_link(Table(tmp_path / "s.db"), settings, announce=said.append) as publisher:
        assert "beyond this machine" in said[0] and "commands need the GM token" in said[0]
        token_file = tmp_path / "gm-token"
        assert token_file.read_text().strip() in said[1]
        _only_the_gm_moves_the_tide(publisher, settings, token_file)


def _only_the_gm_moves_the_tide(
    publisher: TablePublisher, settings: MqttSettings, token_file: Path
) -> None:
    """A guest reads the table but its command never reaches the tower; the GM's does."""
    topics = Topics.of(settings)
    guest = settings.model_copy(update={"host": "127.0.0.1"})
    gm = guest.model_copy(update={"username": GM_USER, "password_file": str(token_file)})
    with Listener(guest, topics.tide) as reader, Listener(gm, topics.command_result) as gm:
        assert reader.json_on(topics.tide)["position"] == 8  # anyone reads
        acked = threading.Event()  # the broker has routed or dropped it once it acks
        body = '{"id": "guest", "weight_a": 3}'
        assert reader.client.publish(topics.command("setup"), body, 1, on_ack=acked.set)
        assert acked.wait(WAIT)
        gm.client.publish(topics.command("setup"), '{"id": "g", "weight_a": 4}', qos=1)
        assert gm.json_on(topics.command_result, lambda b: b["id"] == "g")["ok"]
        replies = [json.loads(m.payload) for m in gm.seen if m.topic == topics.command_result]
        assert [r["id"] for r in replies] == ["g"]  # the guest's never reached the tower
        assert publisher.table.bar().position == 4  # the GM's Tide, never the guest's


def test_a_broker_on_loopback_stays_open_to_this_machine() -> None:
    assert not MqttSettings(bind="127.0.0.1").guarded
    assert not MqttSettings(bind="localhost").guarded
    assert MqttSettings(bind="192.168.1.20").guarded and MqttSettings(lan=True).guarded
    assert not MqttSettings(host="pi.local", bind="0.0.0.0").guarded  # not the tower's own


def test_a_wrong_token_is_refused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    settings = _lan_settings()
    with table_link(Table(tmp_path / "s.db"), settings):
        (tmp_path / "guess").write_text("aaaa-bbbb-cccc\n")
        login = {"username": GM_USER, "password_file": str(tmp_path / "guess")}
        guess = settings.model_copy(update={"host": "127.0.0.1", **login})
        client = BrokerClient(guess, "guesser")
        client.start()
        try:
            _logged(caplog, "broker refused the connection: Not authorized")
        finally:
            client.stop()
    assert not client.connected.is_set()


def _gm_signs_in(page: Page, token: str) -> None:
    page.locator("summary", has_text="Connection").click()
    page.locator("#form-login [name=password]").fill(token)  # the user is left empty: "gm"
    page.locator("#form-login button").click()


def _set_tide(page: Page, weight_a: int) -> None:
    page.locator("summary", has_text="Set up the Tide").click()
    page.locator("#form-setup [name=weight_a]").fill(str(weight_a))
    page.locator("#form-setup button").click()


def test_a_player_page_cannot_move_the_tide_and_the_gm_page_with_the_token_can(
    tmp_path: Path, page: Page
) -> None:
    settings = _lan_settings()
    with (
        table_link(Table(tmp_path / "s.db"), settings) as publisher,
        DisplayServer(settings, port=free_port()) as server,
    ):
        page.goto(server.url)  # a player's phone
        expect(page.locator("#tower")).to_have_text("tower online")
        expect(page.locator("#tracker-position")).to_have_text("8")
        expect(
            page.locator("summary", has_text="Set up the Tide")
        ).to_be_hidden()  # not for players
        expect(page.locator("#connection summary")).to_be_visible()  # the GM can sign in here
        page.evaluate("send('setup', {weight_a: 5})")  # a player who sends one anyway
        gm = page.context.new_page()
        errors: list[object] = []
        gm.on("pageerror", lambda error: errors.append(error))
        gm.goto(server.url)
        _gm_signs_in(gm, "aaaa-bbbb-cccc")  # a guess
        expect(gm.locator("#link")).to_have_text("broker refused the user or password")
        gm.locator("#form-login [name=password]").fill((tmp_path / "gm-token").read_text().strip())
        gm.locator("#form-login button").click()
        expect(gm.locator("#link")).to_have_text("broker online as gm")
        _set_tide(gm, 4)
        expect(gm.locator("#cmd-status")).to_have_text("setup: done")
        # the GM's command was answered after the player's was sent: had the player's reached
        # the tower it would have been answered first, and the Tide would not be the GM's 4
        expect(page.locator("#tracker-position")).to_have_text("4")  # the players see the GM's
        never_answered = re.compile(r"^setup: (sent…|no reply from the tower .*)$")
        expect(page.locator("#cmd-status")).to_have_text(never_answered)
        assert publisher.table.bar().position == 4 and not errors


def test_display_lan_without_the_towers_config_still_hides_the_gm_controls_until_sign_in(
    tmp_path: Path, page: Page
) -> None:
    """Issue 27 (1): `tidetower display --lan` beside `tidetower run --lan`, no config: the
    display's settings know nothing of `lan`, but a page served to every address is a
    player's until the GM signs in."""
    settings = _lan_settings()
    display = MqttSettings(port=settings.port, ws_port=settings.ws_port)  # no config
    with (
        table_link(Table(tmp_path / "s.db"), settings),
        DisplayServer(display, bind="0.0.0.0", port=free_port()) as server,
    ):
        page.goto(server.url)
        expect(page.locator("#tower")).to_have_text("tower online")
        expect(page.locator("summary", has_text="Set up the Tide")).to_be_hidden()
        expect(page.locator("#undo")).to_be_hidden()
        _gm_signs_in(page, (tmp_path / "gm-token").read_text().strip())
        expect(page.locator("#link")).to_have_text("broker online as gm")
        expect(page.locator("summary", has_text="Set up the Tide")).to_be_visible()


def test_gm_controls_are_open_only_on_loopback_with_an_open_broker_of_this_machine() -> None:
    assert not gm_signs_in(MqttSettings(), "127.0.0.1")  # the one-laptop table
    assert not gm_signs_in(MqttSettings(host="127.0.0.1"), "127.0.0.1")
    assert gm_signs_in(MqttSettings(), "0.0.0.0")  # display --lan / --bind 0.0.0.0
    assert gm_signs_in(MqttSettings(lan=True), "127.0.0.1")  # config lan
    assert gm_signs_in(MqttSettings(bind="192.168.1.20"), "127.0.0.1")
    assert gm_signs_in(MqttSettings(host="127.0.0.1", username="tower"), "127.0.0.1")  # ACL
    assert gm_signs_in(MqttSettings(host="pi.local"), "127.0.0.1")  # a broker on the LAN


def test_the_page_finds_its_broker_where_it_was_served_and_says_which_url_failed(
    tmp_path: Path, page: Page
) -> None:
    settings = _lan_settings()
    with (
        table_link(Table(tmp_path / "s.db"), settings),
        DisplayServer(settings, port=free_port()) as server,
    ):
        page.goto(server.url.replace("127.0.0.1", "localhost"))
        expect(page.locator("#tower")).to_have_text("tower online")
        expect(page.locator("#ws-url")).to_have_text(f"ws://localhost:{settings.ws_port}/mqtt")
    nowhere = settings.model_copy(update={"ws_port": free_port()})
    with DisplayServer(nowhere, port=free_port()) as server:
        page.goto(server.url)
        url = f"ws://127.0.0.1:{nowhere.ws_port}/mqtt"
        expect(page.locator("#link")).to_have_text(f"broker offline: tried {url}")


def test_the_page_shows_how_to_join_with_the_same_qr_code(tmp_path: Path, page: Page) -> None:
    port = free_port()
    join = f"http://127.0.0.1:{port}/"
    with DisplayServer(_lan_settings(), port=port, join_url=join) as server:
        page.goto(server.url)
        page.locator("#join summary").click()
        expect(page.locator("#join p")).to_have_text(join)
        expect(page.locator("#join img")).to_have_attribute("alt", f"QR code of {join}")
        page.wait_for_function(  # the QR code loaded: an image, not a broken link
            "() => document.querySelector('#join img').naturalWidth > 100", timeout=WAIT * 1000
        )
        svg = urllib.request.urlopen(f"{join}qr.svg", timeout=WAIT).read()
        assert svg.startswith(b"<?xml") and join.encode() in svg
    with DisplayServer(_lan_settings(), port=free_port()) as alone:  # this machine only
        page.goto(alone.url)
        expect(page.locator("#link")).to_contain_text("broker")
        assert page.locator("#join").count() == 0


def test_display_on_the_lan_prints_its_address_and_qr_code() -> None:
    addresses = lan_addresses()
    assert all(not a.startswith("127.") for a in addresses)
    assert join_urls("127.0.0.1", 8080) == []
    assert join_urls("0.0.0.0", 8080) == [f"http://{a}:8080/" for a in addresses]
    port = free_port()
    display = subprocess.Popen(
        [sys.executable, "-m", "tidetower.firmware.cli", "display", "--lan", "--port", str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert display.stdout is not None
        first = display.stdout.readline()
        assert f"at http://127.0.0.1:{port}/" in first
        second = display.stdout.readline()
        if addresses:
            assert second.startswith(f"on the LAN: http://{addresses[0]}:{port}/")
            qr = qr_text(f"http://{addresses[0]}:{port}/")
            assert display.stdout.readline() == qr.splitlines(keepends=True)[0]
        else:
            assert second.startswith("no LAN address found")
        page = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=WAIT).read()
        assert b"join.js" in page
    finally:
        display.terminate()
        display.wait()
