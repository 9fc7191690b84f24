"""The display page in real headless Chromium, over MQTT-over-WebSockets to Mosquitto."""

from __future__ import annotations

from pathlib import Path

from mqtt_fixtures import WAIT, Embedded, Mosquitto, free_port
from playwright.sync_api import Page, expect

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead
from tidetower.firmware.teach_cli import Progress
from tidetower.mqtt.display.server import DisplayServer, export_page
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.registry import TowerControls
from tidetower.mqtt.teaching import TeachLink


def test_the_page_shows_a_roll_and_its_tide_form_moves_the_tide(
    mosquitto: Mosquitto, tmp_path: Path, page: Page
) -> None:
    settings = mosquitto.settings()
    table = Table(tmp_path / "s.db")
    with (
        TablePublisher(table, settings) as publisher,
        DisplayServer(settings, port=free_port()) as server,
    ):
        page.goto(server.url)
        expect(page.locator("#tower")).to_have_text("tower online")
        expect(page.locator("#tracker-position")).to_have_text("8")
        table.declare(
            RollContext(
                actor="Zhao",
                side="a",
                mode="unopposed",
                pool=2,
                params={"tier": "d6", "tide_linked": True},
            )
        )
        expect(page.locator("#declared")).to_contain_text("Zhao")
        expect(page.locator("#odds .row:not(.outcome)")).to_have_count(3)  # 0, 1, 2 Marks
        expect(page.locator("#odds .row:not(.outcome)").nth(1)).to_contain_text("1 Mark ")
        expect(page.locator("#odds .row.outcome")).to_have_count(3)  # where the Tide goes
        publisher.record(Roll((Die(DieKind.D6, 6), Die(DieKind.D6, 2), Die(DieKind.D20, 20))))
        expect(page.locator("#outcome")).to_contain_text("Zhao: 1 Mark")
        expect(page.locator("#dice .die")).to_have_count(3)
        expect(page.locator("#dice .die[data-kind=d6] circle")).to_have_count(8)  # 6 + 2 pips
        expect(page.locator("#tracker-position")).to_have_text("9")
        expect(page.locator("#history li.roll")).to_have_count(1)

        page.locator("summary", has_text="Set up the Tide").click()
        page.locator("#form-setup [name=weight_a]").fill("5")
        page.locator("#form-setup [name=weight_b]").fill("7")
        page.locator("#form-setup button").click()
        expect(page.locator("#cmd-status")).to_have_text("setup: done")
        expect(page.locator("#tracker-position")).to_have_text("5")
        expect(page.locator("#tracker-length")).to_have_text("11")
        assert table.bar().position == 5

        page.locator("#undo").click()
        page.locator("#undo-yes").click()  # asked first: tests/test_mqtt_table_page.py
        # the roll came before the new Tide: taking it back would lose the Tide, so it stays
        expect(page.locator("#cmd-status")).to_contain_text("undo refused: cannot take back")
        expect(page.locator("#history li.roll")).to_have_count(1)
        expect(page.locator("#history li.action")).to_have_count(1)  # the new Tide
        page.locator("#reread").click()  # no read loop in this tower: refused, and said so
        expect(page.locator("#cmd-status")).to_contain_text("reread refused (command)")


def test_the_page_opened_late_from_a_file_shows_the_bar_and_last_roll(
    any_broker: Mosquitto | Embedded, tmp_path: Path, page: Page
) -> None:
    settings = any_broker.settings()
    with TablePublisher(Table(tmp_path / "s.db"), settings) as publisher:
        publisher.table.declare(RollContext(actor="Zhao", side="a", params={"tide_linked": True}))
        publisher.record(Roll((Die(DieKind.D8, 5), Die(DieKind.D20, 20))))
        assert publisher.wait_delivered(WAIT) and publisher.client.wait_connected(WAIT)
        html = export_page(tmp_path / "page")
        page.goto(
            f"file://{html}?ws=ws://127.0.0.1:{any_broker.ws_port}/mqtt&table={settings.table}"
        )
        expect(page.locator("#tracker-position")).to_have_text("9")
        expect(page.locator("#bar .cell")).to_have_count(16)
        expect(page.locator("#outcome")).to_contain_text("Zhao: 1 Mark")  # from `session`
        expect(page.locator("#dice .die")).to_have_count(2)


class Tray:
    """The read loop's side of the GM's fixes (TowerControls), recording each call."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    def reread(self) -> None:
        self.calls.append(("reread",))

    def enter_die(self, index: int, die: str, value: int) -> None:
        self.calls.append(("die", index, die, value))

    def drop_die(self, index: int) -> None:
        self.calls.append(("not a die", index))

    def rethrow(self) -> None:
        self.calls.append(("rethrow",))


ATTENTION = {
    "kind": "unreadable",
    "reason": "2 die(s) could not be read: face blurred; dice touching",
    "unreadable": [
        {"index": 0, "box": [0.3, 0.6, 0.4, 0.74], "reason": "face blurred"},
        {"index": 1, "box": [0.7, 0.5, 0.8, 0.64], "reason": "dice touching"},
    ],
    "dice": [{"kind": "d6", "value": 4, "confidence": 0.97, "box": [0.1, 0.1, 0.2, 0.24]}],
}


def test_the_gm_fixes_an_unreadable_die_from_the_page(
    mosquitto: Mosquitto, tmp_path: Path, page: Page
) -> None:
    settings = mosquitto.settings()
    tray: TowerControls = Tray()
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings, tray) as publisher,
        DisplayServer(settings, port=free_port()) as server,
    ):
        publisher.tower_state("needs-attention", ATTENTION)
        page.goto(server.url)
        expect(page.locator("#tower-state")).to_have_text("needs attention")
        panel = page.locator("#attention-panel")
        expect(panel.locator(".unreadable")).to_have_count(2)
        expect(panel.locator(".unreadable").nth(1)).to_contain_text("#1: dice touching")
        expect(panel.locator("#tray .spot.unread")).to_have_count(2)
        faces = panel.locator(".unreadable").nth(1).locator("button.face")
        expect(faces).to_have_count(6)  # the dice read are d6: faces 1..6
        box = faces.nth(5).bounding_box()
        assert box is not None and box["x"] + box["width"] <= 390  # on the phone's screen
        faces.nth(3).click()
        expect(page.locator("#attention-status")).to_have_text("die: done")
        assert tray.calls == [("die", 1, "d6", 4)]  # type: ignore[attr-defined]
        expect(panel.locator(".unreadable")).to_have_count(1)  # the loop drops the die entered
        page.locator("#attention-rethrow").click()
        expect(page.locator("#cmd-status")).to_have_text("rethrow: done")
        page.locator("#attention-reread").click()
        expect(page.locator("#cmd-status")).to_have_text("reread: done")
        assert tray.calls[1:] == [("rethrow",), ("reread",)]  # type: ignore[attr-defined]
        publisher.tower_state("waiting-for-clear")
        expect(page.locator("#tower-state")).to_have_text("clear the tray")
        expect(panel).to_be_hidden()


CORNER_ATTENTION = {
    "kind": "unreadable",
    "reason": "1 die(s) could not be read: unsure of its kind: d10-tens? (0.25)",
    "unreadable": [
        {"index": 0, "box": [0.0, 0.0, 0.05, 0.05], "reason": "unsure of its kind: d10-tens?"}
    ],
    "dice": [{"kind": "d6", "value": 4, "confidence": 0.97, "box": [0.1, 0.1, 0.2, 0.24]}],
}


def test_the_gm_says_a_tray_corner_is_not_a_die_from_the_page(
    mosquitto: Mosquitto, tmp_path: Path, page: Page
) -> None:
    settings = mosquitto.settings()
    tray: TowerControls = Tray()
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings, tray) as publisher,
        DisplayServer(settings, port=free_port()) as server,
    ):
        publisher.tower_state("needs-attention", CORNER_ATTENTION)
        page.goto(server.url)
        item = page.locator("#attention-panel .unreadable")
        expect(item.locator("button.face")).to_have_count(6)
        not_a_die = item.get_by_role("button", name="#0 is not a die")
        expect(not_a_die).to_have_text("Not a die")
        not_a_die.click()
        expect(page.locator("#attention-status")).to_have_text("die: done")
        assert tray.calls == [("not a die", 0)]  # type: ignore[attr-defined]
        expect(page.locator("#attention-panel")).to_be_hidden()  # nothing left to enter


def test_a_player_sees_the_die_to_enter_but_none_of_the_gms_controls(
    mosquitto: Mosquitto, tmp_path: Path, page: Page
) -> None:
    settings = mosquitto.settings()
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings, Tray()) as publisher,
        DisplayServer(settings, bind="0.0.0.0", port=free_port()) as server,  # a LAN page
    ):
        publisher.tower_state("needs-attention", CORNER_ATTENTION)
        page.goto(server.url)
        item = page.locator("#attention-panel .unreadable")
        expect(item.locator("p").first).to_contain_text("Die #0")  # what the table waits for
        for control in ("button.face", "select.kind", "button.not-a-die"):
            expect(item.locator(control).first).to_be_hidden()
        expect(page.locator("#attention-reread")).to_be_hidden()


NUMERAL_ATTENTION = {
    "kind": "unreadable",
    "reason": "1 die(s) could not be read: unsure: d20 6 or 9 (0.55)",
    "unreadable": [
        {
            "index": 0,
            "box": [0.3, 0.6, 0.4, 0.74],
            "reason": "unsure: d20 6 or 9",
            "kind": "d20",
            "faces": [6, 9],
        }
    ],
    "dice": [{"kind": "d8", "value": 3, "confidence": 0.97, "box": [0.1, 0.1, 0.2, 0.24]}],
}


def test_the_page_draws_each_kind_and_offers_the_readers_guesses_first(
    mosquitto: Mosquitto, tmp_path: Path, page: Page
) -> None:
    settings = mosquitto.settings()
    tray: TowerControls = Tray()
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings, tray) as publisher,
        DisplayServer(settings, port=free_port()) as server,
    ):
        page.goto(server.url)
        expect(page.locator("#tower")).to_have_text("tower online")
        publisher.roll_seen(
            [
                DieRead("d10-tens", 0, (0.1, 0.1, 0.2, 0.2), 0.9),
                DieRead("d10", 7, (0.3, 0.1, 0.4, 0.2), 0.9),
                DieRead("d20", 17, (0.5, 0.1, 0.6, 0.2), 0.9),
            ]
        )
        expect(page.locator("#dice .die")).to_have_count(3)
        expect(page.locator("#dice .die[data-kind=d10-tens] text")).to_have_text("00")
        expect(page.locator("#dice .die[data-kind=d10] text")).to_have_text("7")
        expect(page.locator("#dice .die[data-kind=d20] polygon")).to_have_count(1)
        publisher.tower_state("needs-attention", NUMERAL_ATTENTION)
        item = page.locator("#attention-panel .unreadable")
        expect(item.locator("select.kind")).to_have_value("d20")
        faces = item.locator("button.face")
        expect(faces).to_have_count(20)
        expect(faces.nth(0)).to_have_text("6")
        expect(faces.nth(1)).to_have_text("9")
        expect(item.locator("button.face.guess")).to_have_count(2)
        item.locator("select.kind").select_option("d10-tens")
        expect(faces).to_have_count(10)
        expect(faces.nth(0)).to_have_text("00")
        item.locator("select.kind").select_option("d20")
        faces.nth(1).click()
        expect(page.locator("#attention-status")).to_have_text("die: done")
        assert tray.calls == [("die", 0, "d20", 9)]  # type: ignore[attr-defined]


def test_the_page_shows_the_teach_flow_and_confirms_a_face(
    mosquitto: Mosquitto, page: Page
) -> None:
    settings = mosquitto.settings()
    with TeachLink(settings) as link, DisplayServer(settings, port=free_port()) as server:
        page.goto(server.url)
        panel = page.locator("#teach-panel")
        expect(page.locator("#link")).to_have_text("broker online")
        expect(panel).to_be_hidden()
        progress = Progress("d20", "<b>white</b> omen", link)  # shown as text, never as HTML
        progress.show("confirm", set(range(6, 21)), guess=17)
        expect(panel).to_be_visible()
        expect(page.locator("#teach-title")).to_have_text("Teaching the d20 “<b>white</b> omen”")
        expect(page.locator("#teach-progress")).to_contain_text("5 of 20 faces taught")
        faces = panel.locator("button.face")
        expect(faces).to_have_count(15)  # the faces still to teach, the camera's guess first
        expect(faces.nth(0)).to_have_text("17")
        expect(panel.locator("button.face.guess")).to_have_count(1)
        faces.nth(0).click()
        expect(page.locator("#teach-status")).to_have_text("teach: done")
        assert link.answers.get(timeout=WAIT) == "17"
        expect(faces.nth(1)).to_be_disabled()  # one answer a throw
        progress.show("throw", set(range(6, 17)) | set(range(18, 21)))
        expect(faces).to_have_count(0)
        expect(page.locator("#teach-step")).to_have_text("Throw the die into the tower.")
    expect(panel).to_be_hidden()  # the flow's end empties the retained state
