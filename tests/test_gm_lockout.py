"""Issue 37 (1): a guest cannot lock the GM out. An anonymous guest on the tower's own LAN
Mosquitto reads every reply on `cmd/result`, takes each reply id's prefix as the client id
that sent it and connects with it every 0.3 s (bench/gm_lockout.py); the signed-in page and
`tidetower gm` are answered all the same, and no client id of the GM's or the tower's is
ever in anything a guest can read."""

from __future__ import annotations

import sys
from pathlib import Path

from mqtt_fixtures import WAIT, Listener, free_port
from playwright.sync_api import Page, expect

from tidetower.engine.table import Table
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.gm_cli import send
from tidetower.mqtt.lan import LanAccess
from tidetower.mqtt.runtime import table_link
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from gm_lockout import Squatter, gm_settings  # the attack is the benchmark's


def _signed_in(page: Page, url: str, token: str) -> None:
    page.goto(url)
    page.locator("#connection summary").click()
    page.locator("#form-login [name=password]").fill(token)
    page.locator("#form-login button").click()
    expect(page.locator("#link")).to_have_text("broker online as gm")


def _declared(page: Page, actor: str) -> None:
    page.evaluate(f"send('declare', {{actor: '{actor}'}})")
    expect(page.locator("#cmd-status")).to_have_text("declare: done")


def test_a_guest_squatting_the_ids_replies_name_never_locks_the_gm_out(
    tmp_path: Path, page: Page
) -> None:
    settings = MqttSettings(port=free_port(), ws_port=free_port(), lan=True, bind="127.0.0.1")
    token_file = tmp_path / "gm-token"
    with (
        table_link(Table(tmp_path / "s.db"), settings) as publisher,
        DisplayServer(settings, port=free_port()) as server,
        Listener(settings, f"{Topics.of(settings).base}/#") as everything,
    ):
        _signed_in(page, server.url, token_file.read_text().strip())
        with Squatter(settings) as guest:
            _declared(page, "first")  # its reply is what the guest reads
            assert guest.learnt.wait(WAIT) and guest.attacked.wait(WAIT)
            for n in range(5):
                _declared(page, f"page-{n}")
            gm = gm_settings(settings, token_file)
            for n in range(3):
                assert send(gm, "declare", {"id": f"cli-{n}", "actor": f"cli-{n}"}, WAIT)["ok"]
            expect(page.locator("#link")).to_have_text("broker online as gm")
        assert publisher.table.state.declared.actor == "cli-2"
        page_id = page.evaluate("client.clientId")
        secret = (tmp_path / "tower-secret").read_text().strip()
        tower_id = LanAccess(tmp_path, "", secret, 0).tower_client_id
        while not everything.messages.empty():  # all it has had, without waiting for more
            everything.seen.append(everything.messages.get())
        said = [m.topic.encode() + m.payload for m in everything.seen]
        assert said and not [m for m in said if page_id.encode() in m or tower_id.encode() in m]
        assert page_id not in guest.learned and tower_id not in guest.learned
