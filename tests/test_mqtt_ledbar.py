"""The LED bar node: a WLED emulated by a test client, and the strip's frames."""

from __future__ import annotations

import itertools
import json
import queue
from pathlib import Path

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mqtt_fixtures import WAIT, Listener, Mosquitto

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import BarState, RollContext
from tidetower.engine.table import Table
from tidetower.mqtt.ledbar.node import LedbarNode, Pacer, TerminalRenderer, WledRenderer
from tidetower.mqtt.ledbar.strip import (
    FRAME_GAP,
    WALK_FRAMES,
    WLED_SEGMENTS,
    Span,
    Step,
    animation,
    bar_frame,
    marker_led,
    pixels,
    walk_leds,
    wled_state,
)
from tidetower.mqtt.ledbar.terminal import render_bar
from tidetower.mqtt.payloads import BarPayload, TrackerBody
from tidetower.mqtt.publisher import TablePublisher

CRIMSON, WHITE, TEAL = [220, 20, 60], [255, 255, 255], [0, 128, 128]
BAR = BarPayload(
    system="tide",
    low=0,
    high=15,
    length=15,
    position=8,
    label_a="A",
    label_b="B",
    colour_a="#dc143c",
    colour_b="#008080",
)


def segments(message: bytes) -> list[tuple[int, int, list[int]]]:
    state = json.loads(message)
    return [(s["start"], s["stop"], s["col"][0]) for s in state["seg"] if s["stop"]]


def test_a_wled_strip_gets_the_right_segments(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings(led_count=30)
    wled = "wled/tidebar"
    table = Table(tmp_path / "s.db")
    node = LedbarNode(settings)  # its renderer is in place before the first bar can arrive
    node.renderers.append(WledRenderer(node.client, wled))
    with Listener(settings, f"{wled}/api") as strip, TablePublisher(table, settings), node:
        first = strip.wait_for(lambda m: True)
        assert segments(first.payload) == [(0, 15, CRIMSON), (15, 16, WHITE), (16, 30, TEAL)]
        table.declare(
            RollContext(actor="Zhao", side="a", mode="unopposed", params={"tide_linked": True})
        )
        table.record(Roll((Die(DieKind.D6, 2), Die(DieKind.D20, 20))))
        # 8 -> 9 on a 15-step track: LED 15 -> 17 on 30 LEDs, walked one LED at a time
        walked = strip.wait_for(lambda m: segments(m.payload)[1][0] == 17)
        assert segments(walked.payload) == [(0, 17, CRIMSON), (17, 18, WHITE), (18, 30, TEAL)]
        assert [segments(m.payload)[1][0] for m in strip.seen] == [15, 16, 17]
        strip.client.publish(f"{wled}/status", "online", qos=1)  # WLED rebooted
        again = strip.wait_for(lambda m: m is not walked and m.payload == walked.payload)
    state = json.loads(again.payload)
    assert state["tt"] == 0  # at once, for this message only: WLED's own transition stays
    assert "bri" not in state and "transition" not in state  # the owner's brightness stays
    assert all(len(m.payload) < 1024 for m in strip.seen)  # WLED's MQTT buffer


def test_a_bar_the_node_cannot_draw_does_not_stop_the_next(mosquitto: Mosquitto) -> None:
    settings = mosquitto.settings()
    drawn: queue.Queue[str] = queue.Queue()
    node = LedbarNode(settings)
    node.renderers.append(TerminalRenderer(drawn.put))
    with Listener(settings) as sender, node:
        assert node.client.wait_subscribed(WAIT)
        smudged = BAR.model_copy(update={"colour_a": "smudge"})  # no terminal colour
        for bar in (smudged, BAR.model_copy(update={"position": 9})):
            assert sender.client.publish(node.topics.tide, bar.model_dump_json(), 1)
        line = drawn.get(timeout=WAIT)
    assert "A collapse" in line and " 9 " in click.unstyle(line)


def test_a_walk_sends_at_most_five_frames_however_long_the_strip() -> None:
    assert walk_leds(15, 17) == [16, 17]  # a short walk shows every LED
    assert walk_leds(4, 4) == [4]
    assert walk_leds(0, 299) == [60, 120, 179, 239, 299]
    assert walk_leds(299, 0) == [239, 179, 120, 60, 0]
    across = BAR.model_copy(update={"position": 15})
    steps = animation(BAR.model_copy(update={"position": 0}), across, 300, "a-first")
    assert len(steps) == WALK_FRAMES and all(step.hold >= FRAME_GAP for step in steps)
    routed = BAR.model_copy(update={"position": 0, "routed": "a"})
    rout = animation(BAR.model_copy(update={"position": 15}), routed, 300, "a-first")
    assert len(rout) == WALK_FRAMES + 6 + 1  # the walk, three flashes, the bar
    assert all(step.hold >= FRAME_GAP for step in rout[:-1])


def test_wled_messages_keep_a_gap_even_when_a_newer_bar_cuts_in() -> None:
    now = [10.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    pacer = Pacer(FRAME_GAP, clock=lambda: now[0], sleep=sleep)
    pacer.wait()  # the first message goes at once
    now[0] += 0.05
    pacer.wait()  # a newer bar's first frame, 50 ms after the last one: waits 150 ms
    now[0] += 1.0
    pacer.wait()  # long after: at once
    assert slept == [pytest.approx(FRAME_GAP - 0.05)]


def test_positions_map_evenly_and_the_ends_reach_the_end_leds() -> None:
    assert bar_frame(BAR.model_copy(update={"position": 0}), 10, "a-first") == (
        Span(0, 1, (255, 255, 255)),
        Span(1, 10, (0, 128, 128)),
    )
    end = bar_frame(BAR.model_copy(update={"position": 15}), 10, "a-first")
    assert end[-1] == Span(9, 10, (255, 255, 255))
    mirrored = bar_frame(BAR.model_copy(update={"position": 15}), 10, "b-first")
    assert mirrored[0] == Span(0, 1, (255, 255, 255))
    leds = [bar_frame(BAR.model_copy(update={"position": p}), 16, "a-first") for p in range(16)]
    assert [next(s.start for s in f if s.colour == (255, 255, 255)) for f in leds] == list(
        range(16)
    )


def test_a_rout_flashes_the_winner_and_a_motion_walks() -> None:
    moved = BAR.model_copy(update={"position": 10})
    walk = animation(BAR, moved, 16, "a-first")
    assert len(walk) == 2 and all(step.hold >= FRAME_GAP for step in walk)
    routed = BAR.model_copy(update={"position": 0, "routed": "a"})
    steps = animation(BAR.model_copy(update={"position": 1}), routed, 16, "a-first")
    flashes = [s.frame for s in steps if len(s.frame) == 1]
    assert flashes[0] == (Span(0, 16, (0, 128, 128)),)  # B's colour: B won
    assert len(flashes) == 6 and steps[-1].frame == bar_frame(routed, 16, "a-first")
    assert animation(None, moved, 16, "a-first")[0].frame == bar_frame(moved, 16, "a-first")


def test_pixels_and_the_terminal_bar() -> None:
    frame = bar_frame(BAR, 5, "a-first")
    assert pixels(frame, 5) == [(220, 20, 60)] * 2 + [(255, 255, 255)] + [(0, 128, 128)] * 2
    lines: list[str] = []
    TerminalRenderer(lines.append).settle(BAR)
    assert "A collapse" in lines[-1] and "B collapse" in lines[-1]


@given(
    high=st.integers(1, 200),
    count=st.integers(3, 300),
    data=st.data(),
    orientation=st.sampled_from(["a-first", "b-first"]),
)
def test_every_frame_covers_the_strip_once_and_the_marker_moves_with_the_tide(
    high: int, count: int, data: st.DataObject, orientation: str
) -> None:
    position = data.draw(st.integers(0, high))
    bar = BAR.model_copy(update={"high": high, "length": high, "position": position})
    frame = bar_frame(bar, count, orientation)  # type: ignore[arg-type]
    assert len(pixels(frame, count)) == count
    assert sum(s.stop - s.start for s in frame) == count
    assert all(a.stop == b.start for a, b in itertools.pairwise(frame))
    leds = [marker_led(p, 0, high, count) for p in range(high + 1)]
    assert leds[0] == 0 and leds[-1] == count - 1 and leds == sorted(leds)


CLOCKS = TrackerBody(kind="clocks", name="clocks", ends=["no clock", "full"], position="Filled")
COUNT = TrackerBody(kind="count", name="the Count", ends=["Count 3", "next action"], position="")


def _drawn(bar: BarState, tracker: TrackerBody | None) -> str:
    return click.unstyle(render_bar(bar, tracker))


def test_the_terminal_draws_a_d6_pool_tables_clocks() -> None:
    table = BarState(
        "d6-pool", 0, 6, 2, "Alarm", "full", segments=(("Alarm", 2, 6), ("Escape", 4, 4))
    )
    drawn = _drawn(table, CLOCKS)
    assert drawn.splitlines() == ["Alarm ▓▓░░░░ 2/6", "Escape ▓▓▓▓ 4/4"]
    empty = _drawn(BarState("d6-pool", 0, 1, 0, "no clock", "full"), CLOCKS)
    assert empty == "clocks: none"
    for text in (drawn, empty):
        assert "collapse" not in text and "Position" not in text and "◆" not in text


def test_the_terminal_draws_a_battle_rhythm_count_and_what_is_pending() -> None:
    pending = (("Kim: strike", 1, 3), ("Orc: shove", 0, 2))
    rhythm = BarState("battle-rhythm", 0, 3, 2, "Count 3", "next action", segments=pending)
    drawn = _drawn(rhythm, COUNT).splitlines()
    assert drawn == ["Count 3 · next action in 2", "  Kim: strike ▓░░ 1/3", "  Orc: shove ░░ 0/2"]
    at_zero = COUNT.model_copy(update={"ends": ["Count 0", "next action"]})
    quiet = _drawn(BarState("battle-rhythm", 0, 1, 0, "Count 0", "next action"), at_zero)
    assert quiet == "Count 0"  # nothing pending: no 'next action in 0', no 'Position 0 of 1'
    none = TrackerBody(kind="none", name="", ends=["", ""], position="")
    assert render_bar(rhythm, none) == ""


def test_a_two_sided_bar_says_its_ends_in_the_systems_words() -> None:
    tide = BarState("tide", 0, 4, 2, "Imperial", "Mongol")
    assert "Imperial collapse" in _drawn(tide, None) and "Mongol collapse" in _drawn(tide, None)
    ends = TrackerBody(kind="two-sided", name="momentum", ends=["A leads", "B leads"], position="")
    drawn = _drawn(tide, ends)
    assert drawn.startswith("A leads ") and "B leads" in drawn and "collapse" not in drawn


def test_the_strip_lights_each_clock_and_nothing_for_no_tracker() -> None:
    clocks = BAR.model_copy(
        update={"tracker": CLOCKS, "segments": [("Alarm", 2, 4), ("Escape", 4, 4)]}
    )
    frame = bar_frame(clocks, 9, "a-first")
    lit = [c for c in pixels(frame, 9)]
    assert lit[:2] == [(220, 20, 60)] * 2 and lit[2] != (220, 20, 60) and lit[4] == (0, 0, 0)
    assert lit[5:9] == [(220, 20, 60)] * 4
    assert animation(BAR.model_copy(update={"tracker": CLOCKS}), clocks, 9, "a-first") == [
        Step(frame)
    ]  # clocks do not walk
    assert len(json.dumps(wled_state(frame))) < 1024
    empty = BAR.model_copy(update={"tracker": CLOCKS})
    assert set(pixels(bar_frame(empty, 9, "a-first"), 9)) == {(0, 0, 0)}
    none = BAR.model_copy(
        update={"tracker": TrackerBody(kind="none", name="", ends=[], position="")}
    )
    assert set(pixels(bar_frame(none, 9, "a-first"), 9)) == {(0, 0, 0)}


@given(
    parts=st.lists(
        st.tuples(st.text(max_size=5), st.integers(0, 12), st.integers(1, 12)), max_size=8
    ),
    count=st.integers(3, 300),
    orientation=st.sampled_from(["a-first", "b-first"]),
)
def test_every_clock_frame_stays_on_the_strip(
    parts: list[tuple[str, int, int]], count: int, orientation: str
) -> None:
    bar = BAR.model_copy(update={"tracker": CLOCKS, "segments": parts})
    frame = bar_frame(bar, count, orientation)  # type: ignore[arg-type]
    assert all(0 <= s.start < s.stop <= count for s in frame)
    assert len(frame) <= WLED_SEGMENTS
    assert all(a.stop <= b.start for a, b in itertools.pairwise(frame))
