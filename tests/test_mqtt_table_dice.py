"""Issue 36: the table's dice on the wire and on the page. The retained `dice` follows the
tower's dice folder (a die taught, renamed, forgotten, a damaged file) through Mosquitto, and
the page's "Table's dice" panel lists them, in real headless Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from mqtt_fixtures import Listener, Mosquitto, free_port
from playwright.sync_api import Page, expect

from tidetower.engine.table import Table
from tidetower.firmware.table_dice import DiceFolder, css_colour
from tidetower.mqtt.dice import MAX_DICE, DicePayload, follow_dice
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics
from tidetower.vision.dice import table as dice_table
from tidetower.vision.dice.matcher import SIDE
from tidetower.vision.dice.table import (
    DiceFileError,
    TableDie,
    forget_die,
    load_die,
    new_die,
    read_card,
    rename_die,
    save_die,
)

GREEN = (40.0, 150.0, 60.0)
"""BGR: the page shows it as #3c9628."""


def omen(faces: tuple[int, ...] = (1, 1, 1, 2)) -> TableDie:
    """A green numeral d6 taught a photo per face given: face 1 thrice, face 2 once."""
    crops = np.zeros((len(faces), SIDE, SIDE, 3), np.uint8)
    return new_die("Green Omen", "d6", "numerals", GREEN).with_photos(crops, faces)


@contextmanager
def publishing(settings: MqttSettings, tmp_path: Path, folder: Path) -> Iterator[TablePublisher]:
    """A table's publisher following the dice in `folder`, as `tidetower run` sets it up."""
    with TablePublisher(Table(tmp_path / "s.db"), settings) as publisher:
        follow_dice(publisher, DiceFolder(lambda: folder))
        yield publisher


def names(body: dict[str, object]) -> list[str]:
    dice = body["dice"]
    assert isinstance(dice, list)
    return [die["name"] for die in dice]


def test_the_retained_dice_follow_a_die_taught_renamed_then_forgotten(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    folder = tmp_path / "s-dice"
    save_die(folder, omen())
    settings = mosquitto.settings()
    topic = Topics.of(settings).dice
    with (
        publishing(settings, tmp_path, folder),
        Listener(settings, topic) as listener,
    ):
        first = listener.json_on(topic)
        rename_die(folder, "Green Omen", "Old Omen")
        renamed = listener.json_on(topic, lambda b: names(b) == ["Old Omen"])
        forget_die(folder, "Old Omen")
        listener.json_on(topic, lambda b: b["dice"] == [])
        with Listener(settings, topic) as late:  # kept by the broker
            assert late.json_on(topic)["dice"] == []
            assert all(m.retain for m in late.seen)
    DicePayload.model_validate(first)
    assert first["v"] == 1 and first["enough"] == 3 and first["problems"] == []
    assert first["dice"] == [
        {
            "name": "Green Omen",
            "kind": "d6",
            "printed": "numerals",
            "colour": "#3c9628",
            "photos": 4,
            "short": ["2", "3", "4", "5", "6"],
        }
    ]
    assert renamed["dice"][0]["photos"] == 4


def test_a_damaged_die_file_is_one_line_and_the_other_dice_still_go_out(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    folder = tmp_path / "s-dice"
    save_die(folder, omen())
    (folder / f"broken{dice_table.SUFFIX}").write_bytes(b"PK\x03\x04 not a die")
    settings = mosquitto.settings()
    topic = Topics.of(settings).dice
    with (
        publishing(settings, tmp_path, folder),
        Listener(settings, topic) as listener,
    ):
        body = listener.json_on(topic)
        save_die(folder, omen((1, 1, 1, 2, 2, 2)))  # learning in play: the die's file grows
        grown = listener.json_on(topic, lambda b: b["dice"][0]["photos"] == 6)
    assert names(body) == ["Green Omen"]
    (problem,) = body["problems"]
    assert "broken" in problem and "\n" not in problem
    assert grown["dice"][0]["short"] == ["3", "4", "5", "6"]


def test_a_folder_of_too_many_dice_is_refused_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "s-dice"
    folder.mkdir()
    for n in range(MAX_DICE + 1):
        (folder / f"die-{n}{dice_table.SUFFIX}").write_bytes(b"")
    body = DiceFolder(lambda: folder).payload()
    assert body.dice == [] and len(body.problems) == 1 and "more than the 64" in body.problems[0]
    assert MAX_DICE == dice_table.MAX_DICE


def test_a_die_s_card_is_read_without_its_photos_and_checked_as_its_file_is(
    tmp_path: Path,
) -> None:
    path = save_die(tmp_path, omen())
    assert read_card(path).faces == load_die(path).faces == (1, 1, 1, 2)
    bad = new_die("Small", "d6", "pips", GREEN)
    bad = TableDie(bad.meta, np.zeros((1, 8, 8, 3), np.uint8), (1,))
    wrong = save_die(tmp_path, bad)
    with pytest.raises(DiceFileError, match="colour crops"):
        read_card(wrong)
    assert css_colour((0.0, 0.4, 255.0)) == "#ff0000"


def test_the_page_lists_the_table_s_dice(mosquitto: Mosquitto, tmp_path: Path, page: Page) -> None:
    folder = tmp_path / "s-dice"
    settings = mosquitto.settings()
    with (
        publishing(settings, tmp_path, folder),
        DisplayServer(settings, port=free_port()) as server,
    ):
        page.goto(server.url)
        page.locator("body").evaluate("b => b.classList.add('player')")  # players see it too
        expect(page.locator("#table-dice-empty")).to_be_visible()
        expect(page.locator("#table-dice-empty")).to_contain_text(
            "tidetower teach --die KIND --name NAME"
        )
        save_die(folder, omen())
        row = page.locator("#table-dice li.table-die[data-name='Green Omen']")
        expect(row).to_contain_text("Green Omen d6, numerals, 4 photos")
        expect(row).to_contain_text("under 3 photos: 2 3 4 5 6")
        expect(row.locator(".swatch")).to_have_css("background-color", "rgb(60, 150, 40)")
        expect(page.locator("#table-dice-empty")).to_be_hidden()
