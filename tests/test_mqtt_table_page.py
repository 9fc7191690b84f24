"""The page at the table, in real headless Chromium over Mosquitto: the table view read from
two metres, the tray photo of each roll in the history and in needs-attention (a close-up of
each die the reader was unsure of, its guesses first), and undo asked first, then redo."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from mqtt_fixtures import Mosquitto, free_port
from playwright.sync_api import Page, expect
from test_mqtt_display import Tray

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead, Reading, roll_of
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.registry import TowerControls

ZHAO = RollContext(
    actor="Zhao", side="a", mode="unopposed", pool=3, params={"tier": "d8", "tide_linked": True}
)
READING = (
    DieRead("d8", 6, (0.1, 0.1, 0.2, 0.24), 0.97),
    DieRead("d8", 2, (0.3, 0.1, 0.4, 0.24), 0.91),
    DieRead("d8", 5, (0.5, 0.1, 0.6, 0.24), 0.88),
    DieRead("d20", 20, (0.7, 0.1, 0.8, 0.24), 1.0, typed=True),  # typed
)
OMEN = roll_of(Reading(READING))
START = 1_790_000_000.0  # the table's clock: rolls and GM actions carry when they happened


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    ticks = itertools.count()
    with Table(tmp_path / "s.db", clock=lambda: START + 60 * next(ticks)) as opened:
        yield opened


def test_the_table_view_shows_the_bar_the_result_and_the_dice_that_scored(
    mosquitto: Mosquitto, table: Table, page: Page
) -> None:
    settings = mosquitto.settings()
    with (
        TablePublisher(table, settings) as publisher,
        DisplayServer(settings, port=free_port()) as server,
    ):
        page.goto(f"{server.url}?view=table")
        expect(page.locator("#tower")).to_have_text("tower online")
        for gm_only in ("#gm", "#history-panel", "#undo"):
            expect(page.locator(gm_only)).to_be_hidden()
        table.declare(ZHAO)
        expect(page.locator("#odds .row.outcome")).to_have_count(3)  # where the Tide may go
        expect(page.locator("#odds .row.outcome").first).to_contain_text("Tide moves toward A")
        expect(page.locator("#odds .row:not(.outcome)").first).to_be_hidden()  # not each count
        publisher.record(OMEN, reading=READING)
        dice = page.locator("#dice .die")
        expect(dice).to_have_count(4)
        expect(page.locator("#dice .die.scored")).to_have_count(3)  # the 6, the 5, the Omen
        expect(dice.nth(1)).not_to_have_class(re.compile("scored"))
        expect(dice.nth(3)).to_have_class(re.compile(r"\bomen\b"))  # it moved the Tide
        expect(page.locator("#dice .die.typed")).to_have_count(1)  # the d20 the GM typed
        expect(page.locator("#moved .who")).to_have_text("Zhao · 2 Marks")
        expect(page.locator("#moved .motion")).to_have_text(["omen 20 toward B's collapse: 8 → 9"])
        expect(page.locator("#tracker-position")).to_have_text("9")
        expect(page.locator("#dice .conf").first).to_be_hidden()  # players need no percentages
        big = dice.first.locator("svg").bounding_box()
        bar = page.locator("#bar").bounding_box()
        assert big is not None and big["width"] >= 70 and bar is not None and bar["height"] >= 60

        page.locator("#view-toggle").click()  # the GM's phone: controls, history, confidences
        expect(page.locator("#gm")).to_be_visible()
        expect(page.locator("#dice .conf").first).to_have_text(" 97%")
        expect(page.locator("#moved")).to_be_hidden()
        assert "view=table" not in page.url
        small = dice.first.locator("svg").bounding_box()
        assert small is not None and small["width"] < big["width"]
        table.declare(RollContext(actor="Side B", side="b", mode="tide", params={"marks": 1}))
        expect(page.locator("#declared")).to_have_text(
            "Declared: Side B, tide, Marks 1"  # the side said once, the field by its label
        )


def _photo(
    path: Path, marks: dict[tuple[float, float, float, float], tuple[int, int, int]]
) -> None:
    """A 640x480 tray photo, grey, with a coloured square (BGR) on each box."""
    image = np.full((480, 640, 3), 128, np.uint8)
    for (x0, y0, x1, y1), colour in marks.items():
        image[int(y0 * 480) : int(y1 * 480), int(x0 * 640) : int(x1 * 640)] = colour
    assert cv2.imwrite(str(path), image)


def test_each_roll_in_the_history_shows_its_tray_photo_time_and_thrower(
    mosquitto: Mosquitto, table: Table, page: Page, tmp_path: Path
) -> None:
    settings = mosquitto.settings()
    photos = tmp_path / "snapshots"
    photos.mkdir()
    _photo(photos / f"{table.state.next_id}.jpg", {})
    table.declare(ZHAO)
    table.record(OMEN, reading=READING, snapshot=f"{table.state.next_id}.jpg")  # as the tower does
    table.record(Roll((Die(DieKind.D8, 3),), roller="Li"))  # typed in by hand: no photo
    table.record(Roll((Die(DieKind.D8, 4),)), snapshot="pruned-3.jpg")  # its photo is gone
    for _ in range(8):
        table.record(Roll((Die(DieKind.D8, 1),)))
    with (
        TablePublisher(table, settings),
        DisplayServer(settings, port=free_port(), snapshots=photos) as server,
    ):
        page.goto(server.url)
        rolls = page.locator("#history li.roll")
        expect(rolls).to_have_count(11)
        first = page.locator("#history li.roll[data-roll$='-1']")
        photo = first.locator(".thumb img")
        expect(photo).to_be_visible()
        assert photo.evaluate("img => [img.naturalWidth, img.naturalHeight]") == [640, 480]
        expect(first.locator(".seq")).to_have_text("#1")
        expect(first.locator("time")).to_have_attribute("datetime", "2026-09-21T14:13:20.000Z")
        expect(first.locator(".who")).to_have_text("Zhao")
        expect(first.locator(".dice-line .typed")).to_have_text("d20=20 ✎")  # the GM typed it
        typed = page.locator("#history li.roll[data-roll$='-2']")
        expect(typed.locator(".who")).to_have_text("Li")
        expect(typed.locator(".dice-line .typed")).to_have_text("d8=3 ✎")
        expect(typed.locator("img")).to_have_count(0)
        expect(page.locator("#history li.roll[data-roll$='-3'] img")).to_have_count(0)
        newest = rolls.first.locator(".seq")  # "#11" on a phone: not clipped at the edge
        expect(newest).to_have_text("#11")
        number, panel = newest.bounding_box(), page.locator("#history-panel").bounding_box()
        assert number is not None and panel is not None and number["x"] >= panel["x"]


def test_a_page_served_without_the_towers_photos_shows_no_image_for_a_roll(
    mosquitto: Mosquitto, table: Table, page: Page
) -> None:
    """Issue 27 (4): the one-laptop recipe, `tidetower display` with no --snapshots beside a
    tower that keeps photos: no image and no empty photo link on any roll."""
    settings = mosquitto.settings()
    table.declare(ZHAO)
    for _ in range(3):
        table.record(OMEN, reading=READING, snapshot=f"{table.state.next_id}.jpg")
    with TablePublisher(table, settings), DisplayServer(settings, port=free_port()) as server:
        page.goto(server.url)
        expect(page.locator("#history li.roll")).to_have_count(3)
        expect(page.locator("#history .thumb")).to_have_count(0)
        expect(page.locator("#history img")).to_have_count(0)


ATTENTION: dict[str, Any] = {
    "kind": "unreadable",
    "reason": "2 dice could not be read: unsure: d20 6 or 9 (0.55); unsure: 3 or 5",
    "unreadable": [
        {"index": 0, "box": [0.3, 0.6, 0.4, 0.74], "reason": "unsure: d20 6 or 9 (0.55)",
         "kind": "d20", "faces": [6, 9]},
        {"index": 1, "box": [0.7, 0.3, 0.8, 0.44], "reason": "unsure: 3 or 5", "faces": [3, 5]},
    ],
    "dice": [{"kind": "d6", "value": 4, "confidence": 0.97, "box": [0.1, 0.1, 0.2, 0.24]}],
    "snapshot": "attention-t-1.jpg",
}  # fmt: skip


def test_needs_attention_shows_the_photo_and_a_close_up_of_each_unsure_die(
    mosquitto: Mosquitto, table: Table, page: Page, tmp_path: Path
) -> None:
    settings = mosquitto.settings()
    photos = tmp_path / "snapshots"
    photos.mkdir()
    red, blue = (40, 40, 220), (220, 60, 40)
    _photo(photos / "attention-t-1.jpg", {(0.3, 0.6, 0.4, 0.74): red, (0.7, 0.3, 0.8, 0.44): blue})
    tray: TowerControls = Tray()
    with (
        TablePublisher(table, settings, tray) as publisher,
        DisplayServer(settings, port=free_port(), snapshots=photos) as server,
    ):
        publisher.tower_state("needs-attention", ATTENTION)
        page.goto(server.url)
        items = page.locator("#attention-panel .unreadable")
        expect(items).to_have_count(2)
        expect(page.locator("#attention-reason")).to_have_text(
            "2 dice could not be read: enter each below."
        )
        expect(page.locator("#tray img")).to_be_visible()
        for item, (b, g, r) in ((items.nth(0), red), (items.nth(1), blue)):
            crop = item.locator("canvas.crop")
            expect(crop).to_be_visible()
            centre = crop.evaluate("c => [...c.getContext('2d').getImageData(64, 64, 1, 1).data]")
            assert all(abs(got - want) < 40 for got, want in zip(centre, (r, g, b), strict=False))
        for item, guesses in ((items.nth(0), ["6", "9"]), (items.nth(1), ["3", "5"])):
            expect(item.locator("button.face.guess")).to_have_text(guesses)
            expect(item.locator("button.face").nth(0)).to_have_text(guesses[0])  # first buttons
        items.nth(0).locator("button.face.guess").nth(1).click()
        expect(page.locator("#attention-status")).to_have_text("die: done")
        assert tray.calls == [("die", 0, "d20", 9)]  # type: ignore[attr-defined]
        expect(items).to_have_count(1)  # the die entered is gone, the reason follows
        expect(page.locator("#attention-reason")).to_have_text(
            "1 die could not be read: enter it below."
        )


def test_undo_asks_first_names_the_roll_and_redo_puts_it_back(
    mosquitto: Mosquitto, table: Table, page: Page
) -> None:
    settings = mosquitto.settings()
    calm = Roll((Die(DieKind.D8, 1), Die(DieKind.D8, 1), Die(DieKind.D8, 8), Die(DieKind.D20, 1)))
    with (
        TablePublisher(table, settings) as publisher,
        DisplayServer(settings, port=free_port()) as server,
    ):
        for roll, reading in ((OMEN, READING), (calm, None)):
            table.declare(ZHAO)
            publisher.record(roll, reading)
        first, second = (r.id for r in table.state.history)
        page.goto(server.url)
        expect(page.locator("#history li.roll")).to_have_count(2)
        expect(page.locator("#redo")).to_be_hidden()
        page.locator("#undo").click()
        expect(page.locator("#undo-what")).to_have_text(
            "Take back #2 (Zhao), d8 1, 1, 8 and d20 1: Zhao: 1 Mark; omen 1 toward A's "
            "collapse: 9 → 8? "
            "The Tide goes back from 8 to 9."
        )
        page.locator("#undo-no").click()  # kept: nothing is sent
        expect(page.locator("#undo-confirm")).to_be_hidden()
        page.locator("#undo").click()
        page.locator("#undo-yes").click()
        expect(page.locator("#cmd-status")).to_have_text("undo: done")
        # one roll taken back: "keep it" sent nothing before this undo
        expect(page.locator("#history li.roll")).to_have_count(1)
        assert [r.id for r in table.state.history] == [first] and table.bar().position == 9

        redo = page.locator("#redo")
        expect(redo).to_have_text("Redo #2")
        redo.click()
        expect(page.locator("#cmd-status")).to_have_text("redo: done")
        expect(page.locator("#history li.roll .seq")).to_have_text(["#3", "#1"])
        expect(page.locator("#history li.action .summary")).to_have_text(
            [re.compile(rf"^redid {second} as \S+-3: Zhao: 1 Mark"), re.compile(f"^undid {second}")]
        )
        expect(redo).to_be_hidden()
        assert table.bar().position == 8

        page.locator("#undo").click()  # the GM is asked about #3 ...
        expect(page.locator("#undo-what")).to_contain_text("Take back #3")
        table.declare(ZHAO)
        publisher.record(OMEN, reading=READING)  # ... while another roll comes in
        expect(page.locator("#history li.roll")).to_have_count(3)
        page.locator("#undo-yes").click()
        expect(page.locator("#cmd-status")).to_contain_text(
            "undo refused (roll_id): the last roll is now"
        )
        assert len(table.state.history) == 3  # not the roll the GM was asked about: kept


def test_undo_names_the_roll_and_a_refusal_across_a_new_tide_is_shown(
    mosquitto: Mosquitto, table: Table, page: Page
) -> None:
    settings = mosquitto.settings()
    with (
        TablePublisher(table, settings) as publisher,
        DisplayServer(settings, port=free_port()) as server,
    ):
        table.declare(ZHAO)
        rolled = publisher.record(OMEN, reading=READING).id
        page.goto(server.url)
        expect(page.locator("#history li.roll")).to_have_count(1)
        page.locator("summary", has_text="Set up the Tide").click()
        page.locator("#form-setup [name=weight_a]").fill("6")
        page.locator("#form-setup [name=weight_b]").fill("12")
        page.locator("#form-setup [name=label_a]").fill("Imperial")
        page.locator("#form-setup [name=label_b]").fill("Mongol")
        page.locator("#form-setup button").click()
        expect(page.locator("#label-a")).to_have_text("Imperial collapse")
        page.locator("#undo").click()
        expect(page.locator("#undo-what")).to_contain_text(
            "Take back #1 (Zhao), d8 6, 2, 5 and d20 20: Zhao: 2 Marks"
        )
        page.locator("#undo-yes").click()
        expect(page.locator("#undo-status")).to_have_text(
            f"undo refused: cannot take back {rolled}: a new tide was set up after it "
            "(Imperial v Mongol, the bar at 6 of 0..17); undo would lose that set-up"
        )
        expect(page.locator("#undo-status")).to_have_class("error")
        assert [r.id for r in table.state.history] == [rolled]
        assert table.bar().label_a == "Imperial"
