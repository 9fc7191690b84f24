"""Learning from the table, end to end: a simulated tower that cannot read a table's own d20,
a GM who enters each face on the page in Chromium, "learn from corrections", and a reader
that then reads those dice right."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import cv2
import pytest
from gpiozero import Device
from mqtt_fixtures import Mosquitto, free_port
from playwright.sync_api import Page, expect

from tidetower.engine.tray import TowerState
from tidetower.firmware.sim import sim_config, simulated_parts
from tidetower.firmware.tower import Tower
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.runtime import table_link
from tidetower.vision.numerals.teach import parse_labels
from tidetower.vision.read import load_image
from tidetower.vision.synth.numerals import NumeralLook

GREEN_D20 = NumeralLook(
    body=(60, 150, 40), ink=(20, 20, 20), font=cv2.FONT_HERSHEY_TRIPLEX, stroke=0.14
)
"""The table's own d20, a make the shipped reader never saw."""
THROWS = 6
LEARNING_MS = 240_000  # teaching checks the new profile on 40 synthetic trays too: minutes here


@pytest.fixture
def tower(tmp_path: Path) -> Iterator[Tower]:
    config = sim_config(tmp_path / "session.db")
    # the reader trusts no numeral read it makes itself: every d20 needs the GM, until taught
    config.camera.reader = replace(config.camera.reader, numeral_lead=1e9)
    with Tower(config, simulated_parts(config, 31)) as tower:
        # a d20 of a make the table has not taught, not the practice table's own Omen
        tower.camera.settings = replace(tower.camera.settings, look=GREEN_D20, looks=())
        yield tower
    Device.pin_factory = None


def _step_until(tower: Tower, done: Callable[[], bool], frames: int = 200) -> None:
    """Run the tower's read loop frame by frame until `done`; a throw settles, or a cleared
    tray empties, within a few dozen simulated frames."""
    for _ in range(frames):
        if done():
            return
        tower.loop.step()
    raise AssertionError(f"after {frames} frames the tower is still {tower.loop.state}")


def _throw_and_fix_on_page(tower: Tower, page: Page, rolls: int) -> None:
    """Throw a d6 and the d20 Omen; the GM taps the face of each die the tower asks about
    on the page; the tray is cleared."""
    dice = tower.camera.throw(dice=("d6", "d20"))
    _step_until(tower, lambda: tower.loop.state is TowerState.NEEDS_ATTENTION)
    while tower.loop.state is TowerState.NEEDS_ATTENTION:
        attention = tower.loop.attention
        assert attention is not None and attention.reading is not None, attention
        asked = attention.reading.unreadable[0]
        truth = min(dice, key=lambda d: _gap(d.box, asked.box))
        item = page.locator("#attention-panel .unreadable").first
        # the GM names the kind when the reader's guess is another (a render's d20 is often
        # unsure of its kind, issue #25), then taps the face
        item.locator("select").select_option(truth.die)
        expect(item.locator("select")).to_have_value(truth.die)
        item.locator(f'button.face[data-face="{truth.value}"]').click()
        # the reply comes once the loop has taken the die: no waiting on the loop itself
        expect(page.locator("#attention-status")).to_have_text("die: done")
    assert len(tower.table.state.history) == rolls
    tower.camera.reach_in()
    _step_until(tower, lambda: tower.loop.state is TowerState.IDLE and tower.camera.idle)


def _gap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Return how far apart two boxes' centres are (squared, doubled)."""
    return (a[0] + a[2] - b[0] - b[2]) ** 2 + (a[1] + a[3] - b[1] - b[3]) ** 2


@pytest.mark.slow
def test_the_gm_corrects_on_the_page_learns_and_the_tower_reads_right(
    mosquitto: Mosquitto, tower: Tower, page: Page
) -> None:
    settings = mosquitto.settings()
    assert tower.learner is not None
    with (
        table_link(tower.table, settings, tower.loop, learner=tower.learner) as publisher,
        DisplayServer(settings, port=free_port()) as server,
    ):
        _follow(publisher, tower)
        page.goto(server.url)
        expect(page.locator("#learn-count")).to_have_text("0 corrections kept")
        expect(page.locator("#learn")).to_be_disabled()  # too few to learn from
        for rolls in range(1, THROWS + 1):
            _throw_and_fix_on_page(tower, page, rolls)
        expect(page.locator("#learn-count")).to_have_text(f"{THROWS} corrections kept")
        page.locator("#learn").click()
        result = page.locator("#learn-result")
        expect(result).to_contain_text("Adopted", timeout=LEARNING_MS)
        expect(result).to_contain_text("checked on 1 set aside")
    corrections = tower.loop.corrections
    assert corrections is not None
    labels = corrections.labels()
    taught = [name for i, name in enumerate(labels) if i != 4]  # the fifth was set aside
    right = 0
    for name in taught:
        (omen,) = [v for kind, v, _ in parse_labels(labels, name) if kind == "d20"]
        reading = tower.read(load_image(corrections.folder / name))
        read = [d.value for d in reading.dice if d.die == "d20"]
        assert read in ([], [omen]), name  # right, or still asked: never a wrong Omen
        right += read == [omen]  # before learning, no d20 read at all
    # a taught face is matched only when clearly nearest: for this make, most views are
    assert right >= 3, f"{right} of {len(taught)} taught d20 read after learning"


def _follow(publisher: TablePublisher, tower: Tower) -> None:
    """Publish the tower's state and learning, as `tidetower run` does."""
    publisher.follow_loop(tower.loop)
    assert tower.learner is not None
    publisher.follow_learning(tower.learner)
