"""Issue 29: is this die fair, and the Tide's story, on the page. The retained `stats` (each
die's counts and figures over the session, the bar's moves) and the page's Dice and "Bar over
the session" panels, drawn as SVG by the page itself, in real headless Chromium over
Mosquitto.

`TIDETOWER_SCREENS=docs/screens` also writes the two panels' picture, docs/screens/stats.png.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from pathlib import Path

from mqtt_fixtures import Mosquitto, free_port
from playwright.sync_api import Page, expect

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.table import Table
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.payloads import StatsPayload
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.views import stats_payload

ZHAO = RollContext(
    actor="Zhao", side="a", mode="unopposed", pool=2, params={"tier": "d8", "tide_linked": True}
)
LI = RollContext(
    actor="Li", side="b", mode="unopposed", pool=2, params={"tier": "d8", "tide_linked": True}
)
THROWS = [
    (ZHAO, (8, 3, 20)),
    (LI, (1, 5, 1)),
    (ZHAO, (7, 7, 12)),
    (LI, (2, 6, 19)),
    (ZHAO, (4, 8, 2)),
    (LI, (5, 1, 10)),
    (ZHAO, (3, 3, 20)),
    (LI, (6, 2, 1)),
    (ZHAO, (8, 8, 18)),
    (LI, (2, 4, 7)),
]
"""Two d8s and the d20 Omen each, faces known: who threw them and what they showed."""
SIDES = {"label_a": "Zhao", "label_b": "Li"}


def _throw(table: Table, context: RollContext, faces: tuple[int, int, int]) -> None:
    table.declare(context)
    d8a, d8b, omen = faces
    table.record(Roll((Die(DieKind.D8, d8a), Die(DieKind.D8, d8b), Die(DieKind.D20, omen))))


def _play(table: Table) -> None:
    """The throws, then a short Tide set up afresh that Zhao's side routs on: the Omen's 1."""
    table.reset_tracker({"weight_a": 6, "weight_b": 8, **SIDES})
    for context, faces in THROWS:
        _throw(table, context, faces)
    table.reset_tracker({"weight_a": 1, "weight_b": 2, **SIDES})
    _throw(table, ZHAO, (1, 2, 1))


def _counts(index: int) -> Counter[int]:
    return Counter(faces[index] for _, faces in [*THROWS, (ZHAO, (1, 2, 1))])


def test_stats_count_each_die_and_each_move_and_the_rout_behind_a_new_setup(
    tmp_path: Path,
) -> None:
    table = Table(tmp_path / "s.db")
    _play(table)
    stats = StatsPayload.model_validate_json(stats_payload(table.state).model_dump_json())
    d8, d20 = stats.dice
    assert (d8.die, d8.throws, d20.die, d20.throws) == ("d8", 22, "d20", 11)
    assert {int(f): c for f, c in d8.faces.items()} == {
        f: (_counts(0) + _counts(1))[f] for f in range(1, 9)
    }
    assert {int(f): c for f, c in d20.faces.items() if c} == dict(_counts(2))
    assert d8.verdict == d20.verdict == "too few throws to tell"
    assert d8.expected == 22 / 8 and d8.df == 7 and d8.typed == 22  # typed in by hand
    moved = [r for r in table.state.history if r.outcome.motions]
    track = stats.track
    assert len(moved) >= 4 and [p.id for p in track.points] == [r.id for r in moved]
    assert [p.who for p in track.points][:2] == ["Zhao", "Li"]
    assert track.points[-1].routed == "a"  # known though the GM set the Tide up afresh after
    assert (track.points[-1].low, track.points[-1].high, track.points[0].high) == (0, 2, 13)
    assert track.moves == len(moved)
    assert [p.routed for p in track.points[:-1]] == [None] * (len(moved) - 1)
    assert track.tracker is not None and track.tracker.ends == ["Zhao collapse", "Li collapse"]


def test_the_page_draws_each_die_s_chart_and_the_bar_over_the_session(
    mosquitto: Mosquitto, tmp_path: Path, page: Page
) -> None:
    settings = mosquitto.settings()
    table = Table(tmp_path / "s.db")
    with (
        TablePublisher(table, settings),
        DisplayServer(settings, port=free_port()) as server,
    ):
        page.goto(server.url)
        expect(page.locator("#tower")).to_have_text("tower online")
        expect(page.locator("#dice-panel")).to_be_hidden()  # nothing thrown: nothing to show
        expect(page.locator("#track-panel")).to_be_hidden()
        _play(table)
        page.locator("body").evaluate("b => b.classList.add('player')")  # players see it too
        charts = page.locator("#dice-charts figure.die-chart")
        expect(charts).to_have_count(2)
        expect(charts.nth(0)).to_have_attribute("data-die", "d8")
        expect(charts.nth(1)).to_have_attribute("data-die", "d20")
        _check_chart(page, "d8", _counts(0) + _counts(1), 8)
        _check_chart(page, "d20", _counts(2), 20)
        expect(charts.nth(0).locator(".verdict")).to_have_text("too few throws to tell")
        expect(charts.nth(0).locator(".figures")).to_contain_text("22 throws (22 typed by the GM)")
        expect(charts.nth(0).locator(".figures")).to_contain_text("on 7 degrees of freedom")

        moved = [r for r in table.state.history if r.outcome.motions]
        dots = page.locator("#track-chart circle.move")
        expect(dots).to_have_count(len(moved))
        first = moved[0].outcome.motions[0]
        expect(dots.first.locator("title")).to_have_text(
            f"Zhao: {first.cause} ({first.before} → {first.after})"
        )
        expect(page.locator("#track-chart circle.move.rout")).to_have_count(1)
        expect(page.locator("#track-chart .rout-label")).to_have_text("Zhao routs")
        expect(page.locator("#track-chart .end-label")).to_have_text(
            ["Zhao collapse", "Li collapse"]
        )
        expect(page.locator("#track-chart line.setup")).to_have_count(1)  # set up afresh
        expect(page.locator("#track-summary")).to_have_text(f"· {len(moved)} moves, 1 rout")
        _screenshot(page)

        table.undo()  # the rout taken back: both panels follow the session
        expect(dots).to_have_count(len(moved) - 1)
        expect(page.locator("#track-chart circle.move.rout")).to_have_count(0)
        d20 = charts.nth(1)
        expect(d20.locator("h3")).to_have_text("d20 · 10 throws")
        expect(d20.locator("rect.face-bar[data-face='1']")).to_have_attribute("data-count", "2")


def _check_chart(page: Page, die: str, counts: Counter[int], faces: int) -> None:
    """One bar per face with its count, the expected line and a fair die's 95 % band."""
    chart = page.locator(f"figure.die-chart[data-die={die}]")
    bars = chart.locator("rect.face-bar")
    expect(bars).to_have_count(faces)
    for face in range(1, faces + 1):
        bar = bars.nth(face - 1)
        expect(bar).to_have_attribute("data-face", str(face))
        expect(bar).to_have_attribute("data-count", str(counts[face]))
        expect(bar.locator("title")).to_have_text(f"{face}: {counts[face]}")
    throws = sum(counts.values())
    expected = throws / faces
    half = 1.96 * math.sqrt(throws * (1 / faces) * (1 - 1 / faces))
    low, high = max(0.0, expected - half), expected + half
    expect(chart.locator("line.expected title")).to_have_text(f"expected {expected:.1f} per face")
    expect(chart.locator("rect.band title")).to_have_text(
        f"95 % of a fair die's counts: {low:.1f} to {high:.1f}"
    )
    # the band lies around the expected line, and a bar's height is its count's share
    band = chart.locator("rect.band").bounding_box()
    line = chart.locator("line.expected").bounding_box()
    assert band is not None and line is not None
    assert band["y"] < line["y"] < band["y"] + band["height"]


def _screenshot(page: Page) -> None:
    """The two panels' picture for the docs, when TIDETOWER_SCREENS names a folder."""
    folder = os.environ.get("TIDETOWER_SCREENS")
    if not folder:
        return
    page.set_viewport_size({"width": 1100, "height": 900})
    page.locator("body").evaluate("b => b.classList.add('table-view')")  # no GM controls
    dice = page.locator("#dice-panel").bounding_box()
    track = page.locator("#track-panel").bounding_box()
    assert dice is not None and track is not None
    x0, y0 = min(dice["x"], track["x"]), min(dice["y"], track["y"])
    x1 = max(dice["x"] + dice["width"], track["x"] + track["width"])
    y1 = max(dice["y"] + dice["height"], track["y"] + track["height"])
    Path(folder).mkdir(parents=True, exist_ok=True)
    page.screenshot(
        path=str(Path(folder) / "stats.png"),
        clip={"x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0},
        full_page=True,
    )
    page.locator("body").evaluate("b => b.classList.remove('table-view')")
