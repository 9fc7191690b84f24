"""Screenshots of the display page for docs/screens/: the table view and the GM view, on a
phone (390x844) and a desktop (1280x800).

A simulated tower (firmware/sim.py's parts: synthetic trays photographed by a simulated
camera) plays a few Tide throws through the real read loop, publisher, embedded broker and
display server, with tray photos; the GM enters each d20 Omen the reader is not sure of and
undoes and redoes one roll; Debian's Chromium draws the page. Run:

    python bench/screens.py [--out docs/screens]
"""

from __future__ import annotations

import argparse
import socket
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import cv2
from gpiozero import Device
from playwright.sync_api import Page, expect, sync_playwright

from tidetower.engine.rules import RollContext
from tidetower.engine.tray import TowerState
from tidetower.firmware.sim import sim_config, simulated_parts
from tidetower.firmware.tower import Tower
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.runtime import table_link
from tidetower.mqtt.settings import MqttSettings

CHROMIUM = "/usr/bin/chromium"
VIEWPORTS = {"phone": (390, 844), "desktop": (1280, 800)}
WAIT_MS = 30_000
ZHAO = RollContext(
    actor="Zhao", side="a", mode="tide", pool=3, params={"tier": "d6", "tide_linked": True}
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def simulated_tower(folder: Path) -> Iterator[Tower]:
    """A simulated tower whose reader asks the GM about every d20 (never sure of a numeral)."""
    config = sim_config(folder / "session.db")
    config.camera.reader = replace(config.camera.reader, numeral_lead=1e9)
    with Tower(config, simulated_parts(config, 7)) as tower:
        yield tower
    Device.pin_factory = None


def step_until(tower: Tower, done: Callable[[], bool], frames: int = 300) -> None:
    for _ in range(frames):
        if done():
            return
        tower.loop.step()
    raise RuntimeError(f"after {frames} frames the tower is still {tower.loop.state}")


def throw(tower: Tower, dice: tuple[str, ...], answer: bool = True) -> None:
    """Throw `dice` into the tray; the GM enters each die the reader is not sure of (its true
    face, as the simulated camera knows it) unless `answer` is False; then clear the tray."""
    thrown = tower.camera.throw(dice=dice)
    waiting = (TowerState.NEEDS_ATTENTION, TowerState.RESULT)
    step_until(tower, lambda: tower.loop.state in waiting)
    if not answer:
        return
    while tower.loop.state is TowerState.NEEDS_ATTENTION:
        attention = tower.loop.attention
        assert attention is not None and attention.reading is not None
        asked = attention.reading.unreadable[0]
        truth = min(thrown, key=lambda d: _gap(d.box, asked.box))
        tower.loop.enter_die(attention.die_numbers()[0], truth.die, truth.value)
    tower.camera.reach_in()
    step_until(tower, lambda: tower.loop.state is TowerState.IDLE and tower.camera.idle)


def _gap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return (a[0] + a[2] - b[0] - b[2]) ** 2 + (a[1] + a[3] - b[1] - b[3]) ** 2


def play(tower: Tower) -> None:
    """Two exchanges: Zhao opens one, Li another; Li answers Zhao's (the Tide moves), taken
    back by mistake and put back; Zhao is to answer Li's next."""
    tower.table.reset_tracker({"weight_a": 6, "weight_b": 8, "label_a": "Zhao", "label_b": "Li"})
    tower.table.declare(ZHAO)
    throw(tower, ("d6", "d6", "d6", "d20"))
    zhao = tower.table.state.history[-1].id
    tower.table.declare(replace(ZHAO, actor="Li", side="b", pool=2))
    throw(tower, ("d6", "d6", "d20"))
    li = tower.table.state.history[-1].id
    reply = RollContext(actor="Li", side="b", reply_to=zhao, pool=4, params={"tier": "d6"})
    tower.table.declare(reply)
    throw(tower, ("d6", "d6", "d6", "d6", "d20"))
    tower.table.undo()  # a mistake, taken back and put back
    tower.table.redo()
    tower.table.declare(
        RollContext(actor="Zhao", side="a", reply_to=li, pool=3, params={"tier": "d6"})
    )


def shoot(
    page: Page, url: str, out: Path, name: str, ready: Callable[[Page], None], whole: str = ""
) -> None:
    """The page at `url` on each screen, once `ready`; on the screen named `whole`, the
    whole page rather than what the screen shows."""
    for size, (width, height) in VIEWPORTS.items():
        page.set_viewport_size({"width": width, "height": height})
        page.goto(url)
        ready(page)
        path = out / f"{name}-{size}.png"
        page.screenshot(path=str(path), full_page=size == whole)
        small(path)
        print(f"{path} ({path.stat().st_size // 1024} kB)")


def small(path: Path) -> None:
    """Rewrite a screenshot with PNG's strongest compression."""
    cv2.imwrite(str(path), cv2.imread(str(path)), [cv2.IMWRITE_PNG_COMPRESSION, 9])


def table_ready(page: Page) -> None:
    expect(page.locator("#history li.roll")).to_have_count(3)
    expect(page.locator("#dice .die")).to_have_count(5)
    expect(page.locator("#odds .row.outcome")).to_have_count(3)  # where the Tide may go


def gm_ready(page: Page) -> None:
    expect(page.locator("#attention-panel canvas.crop").first).to_be_visible()
    expect(page.locator("#history .thumb img").first).to_be_visible()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parents[1] / "docs/screens")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    expect.set_options(timeout=WAIT_MS)
    folder = Path(tempfile.mkdtemp(prefix="tidetower-screens-"))
    settings = MqttSettings(port=free_port(), ws_port=free_port(), table="north")
    with (
        simulated_tower(folder) as tower,
        table_link(tower.table, settings, tower.loop) as publisher,
        DisplayServer(settings, port=free_port(), snapshots=folder / "snapshots") as server,
        sync_playwright() as playwright,
    ):
        publisher.follow_loop(tower.loop)
        play(tower)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        shoot(page, f"{server.url}?view=table", args.out, "table", table_ready)
        throw(tower, ("d6", "d6", "d20"), answer=False)  # the reader asks the GM
        shoot(page, server.url, args.out, "gm", gm_ready, whole="desktop")
        browser.close()


if __name__ == "__main__":
    main()
