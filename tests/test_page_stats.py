"""Issue 29: is this die fair, and the Tide's story, on the page. The retained `stats` (each
die's counts and figures over the session, the bar's moves) and the page's Dice and "Bar over
the session" panels, drawn as SVG by the page itself, in real headless Chromium over
Mosquitto.

`TIDETOWER_SCREENS=docs/screens` also writes the panels' pictures, docs/screens/stats.png and
luck.png.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from pathlib import Path

from mqtt_fixtures import Mosquitto, free_port
from playwright.sync_api import Page, expect

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.luck import luck
from tidetower.engine.rules import RollContext
from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.stats import SessionStats, StatsPayload, stats_payload

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
        _screenshot(page, "stats.png", "#dice-panel", "#track-panel")

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
    top, height, line = chart.evaluate(  # in one step: a later stats message may redraw it
        "c => { const b = c.querySelector('rect.band'); const l = c.querySelector('line.expected');"
        " return [b.y.baseVal.value, b.height.baseVal.value, l.y1.baseVal.value]; }"
    )
    assert top < line < top + height


def _screenshot(page: Page, picture: str, *panels: str) -> None:
    """The panels' picture for the docs, when TIDETOWER_SCREENS names a folder."""
    folder = os.environ.get("TIDETOWER_SCREENS")
    if not folder:
        return
    page.set_viewport_size({"width": 1100, "height": 900})
    page.locator("body").evaluate("b => b.classList.add('table-view')")  # no GM controls
    boxes = [box for box in (page.locator(p).bounding_box() for p in panels) if box]
    assert len(boxes) == len(panels)
    x0, y0 = min(b["x"] for b in boxes), min(b["y"] for b in boxes)
    x1 = max(b["x"] + b["width"] for b in boxes)
    y1 = max(b["y"] + b["height"] for b in boxes)
    Path(folder).mkdir(parents=True, exist_ok=True)
    page.screenshot(
        path=str(Path(folder) / picture),
        clip={"x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0},
        full_page=True,
    )
    page.locator("body").evaluate("b => b.classList.remove('table-view')")


HIGH = [(ZHAO, (8, 8, 10)), (LI, (3, 4, 11))] * 6
"""Zhao throws the d8s' best every time; Li scores no Marks: six throws each."""


def _play_high(table: Table) -> None:
    table.reset_tracker({"weight_a": 6, "weight_b": 8, **SIDES})
    for context, faces in HIGH:
        _throw(table, context, faces)


def test_the_stats_carry_the_session_s_luck_as_engine_luck_works_it_out(tmp_path: Path) -> None:
    table = Table(tmp_path / "s.db")
    _play_high(table)
    stats = StatsPayload.model_validate_json(stats_payload(table.state).model_dump_json())
    found = luck(table.state.history)
    body = stats.luck
    assert body.throws == len(found.throws) == len(HIGH)
    assert [(t.by, t.name, t.counts, t.throws, t.rolled, t.verdict) for t in body.tallies] == [
        (t.by, t.name, t.counts, t.throws, t.rolled, t.verdict) for t in found.tallies()
    ]
    for wire, engine in zip(body.tallies, found.tallies(), strict=True):
        assert math.isclose(wire.expected, engine.expected)
        assert math.isclose(wire.z, engine.z) and math.isclose(wire.p, engine.p)
    assert [t.name for t in body.tallies] == ["Zhao", "Li", "side a", "side b"]
    zhao = body.tallies[0]
    assert zhao.verdict == "luckier than the odds" and zhao.rolled > zhao.expected
    seqs = {r.id: r.seq for r in table.state.history}
    assert [(t.id, t.seq, t.rolled) for t in body.best] == [
        (t.who.id, seqs[t.who.id], t.rolled) for t in found.best(3)
    ]
    assert [t.who for t in body.best] == ["Zhao"] * 3
    assert [t.who for t in body.worst] == ["Li"] * 3
    for wire_throw, engine_throw in zip(body.best, found.best(3), strict=True):
        assert math.isclose(wire_throw.chance, engine_throw.chance)
    assert body.uncounted == len(found.uncounted) == 0 and body.reasons == []
    assert body.moves == len(found.moves)


def test_a_session_with_no_throws_carries_no_luck(tmp_path: Path) -> None:
    table = Table(tmp_path / "s.db")
    stats = stats_payload(table.state)
    assert (stats.luck.throws, stats.luck.tallies, stats.luck.best) == (0, [], [])


def test_the_page_s_luck_panel_shows_who_threw_high(
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
        expect(page.locator("#luck-panel")).to_be_hidden()  # nothing thrown: nothing to show
        _play_high(table)
        page.locator("body").evaluate("b => b.classList.add('player')")  # players see it too
        found = luck(table.state.history)
        zhao = found.tallies()[0]
        expect(page.locator("#luck-summary")).to_have_text(f"· {len(HIGH)} throws against the odds")
        rows = page.locator("#luck-rows .luck-row")
        expect(rows).to_have_count(4)
        row = page.locator("#luck-rows .luck-row[data-by=actor][data-name=Zhao]")
        expect(row.locator(".verdict")).to_have_text("luckier than the odds")
        expect(row.locator(".verdict")).to_have_class("verdict luckier")
        expect(row.locator(".figures")).to_contain_text(
            f"6 throws: expected {zhao.expected:.1f}, rolled {zhao.rolled} (z = +{zhao.z:.2f}"
        )
        expect(row.locator(".luck-name")).to_have_text(f"Zhao · {zhao.counts}")
        expect(row.locator("rect.rolled-bar")).to_have_attribute("data-value", str(zhao.rolled))
        expect(row.locator("rect.expected-bar")).to_have_attribute(
            "data-value", f"{zhao.expected:.1f}"
        )
        widths = row.evaluate(  # in one step: a later stats message may redraw the row
            "r => ['rolled', 'expected'].map("
            "b => r.querySelector(`rect.${b}-bar`).width.baseVal.value)"
        )
        assert widths[0] > widths[1]  # rolled more than the odds expected
        li = page.locator("#luck-rows .luck-row[data-by=actor][data-name=Li] .verdict")
        expect(li).not_to_have_text("luckier than the odds")
        best = page.locator("#luck-best li")
        expect(best).to_have_count(3)
        expect(best.first).to_contain_text("Zhao (#")
        expect(best.first).to_contain_text("chance of at least that")
        expect(page.locator("#luck-worst li").first).to_contain_text("Li (#")
        expect(page.locator("#luck-summary")).to_have_text(f"· {len(HIGH)} throws against the odds")
        expect(page.locator("#luck-uncounted")).to_be_hidden()
        _screenshot(page, "luck.png", "#luck-panel")


def test_a_die_the_reader_named_is_counted_under_its_name(tmp_path: Path) -> None:
    table = Table(tmp_path / "s.db")
    pool = DieRead("d6", 5, (0.5, 0.1, 0.6, 0.2), 0.9)
    for omen in (
        DieRead("d20", 17, (0.1, 0.1, 0.2, 0.2), 0.9, named="white omen"),
        DieRead("d20", 3, (0.3, 0.1, 0.4, 0.2), 0.9),
    ):
        thrown = (Die(DieKind.D6, 5, (0,)), Die(DieKind.D20, omen.value, (1,)))
        table.record(Roll(thrown), reading=(pool, omen))
    dice = StatsPayload.model_validate_json(stats_payload(table.state).model_dump_json()).dice
    counted = {(d.die, d.named, d.throws) for d in dice}
    assert counted == {("d6", None, 2), ("d20", None, 1), ("d20", "white omen", 1)}


def test_the_kept_stats_are_the_stats_worked_out_afresh_roll_by_roll(tmp_path: Path) -> None:
    """The publisher counts each new roll once; after every roll, an undo and a redo its
    payload is the one the whole history gives."""
    table = Table(tmp_path / "s.db")
    kept = SessionStats()
    for n, faces in enumerate(((8, 7, 20), (1, 2, 1), (5, 5, 13), (6, 1, 2))):
        side = "ab"[n % 2]
        table.declare(RollContext(actor=side.upper(), side=side, params={"tide_linked": True}))
        table.record(
            Roll((Die(DieKind.D8, faces[0]), Die(DieKind.D8, faces[1]), Die(DieKind.D20, faces[2])))
        )
        assert kept.payload(table.state) == stats_payload(table.state)
    table.undo()
    assert kept.payload(table.state) == stats_payload(table.state)
    table.redo()
    assert kept.payload(table.state) == stats_payload(table.state)
    assert kept.payload(table.state).rolls == 4
