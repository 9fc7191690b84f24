"""The tracker on a strip of LEDs, by its kind: a two-sided bar's positions mapped evenly
onto LEDs, with short animations; clocks (and a count's pending parts) as stretches of lit
LEDs side by side; nothing lit for a tracker of kind `none`.

A frame is a few coloured spans (side A, the marker, side B), which is what WLED's segments
take; a NeoPixel strip gets the same frame as one colour per pixel. Every frame stays up at
least FRAME_GAP: a WLED on an ESP8266 takes each frame as one MQTT message, and handles
about ten a second at most (its author, wled/WLED#661), so an animation sends it at most
five a second, and a walk at most WALK_FRAMES however many LEDs the marker crosses.
"""

from __future__ import annotations

from dataclasses import dataclass

from tidetower.mqtt.payloads import BarPayload
from tidetower.mqtt.settings import Orientation

RGB = tuple[int, int, int]
MARKER: RGB = (255, 255, 255)
DARK: RGB = (0, 0, 0)
FRAME_GAP = 0.2
"""Seconds each frame stays up at least: five frames a second."""
WALK_FRAMES = 5
"""Frames a walk shows at most: on a long walk the marker strides several LEDs a frame."""
FLASHES = 3
ROUT_SECONDS = (WALK_FRAMES + 2 * FLASHES) * FRAME_GAP
"""How long the longest rout animation lasts: the walk, then the flashes."""
MAX_PARTS = 4
"""The most clocks (or pending parts) the strip shows side by side; later ones wait."""
WLED_SEGMENTS = 3 * MAX_PARTS
"""WLED segments a frame may use: a lit, an unlit and a gap span per part."""
DIM = 8
"""How much dimmer a part's unlit LEDs glow than its side B colour."""


@dataclass(frozen=True)
class Span:
    """LEDs start..stop-1 in one colour."""

    start: int
    stop: int
    colour: RGB


Frame = tuple[Span, ...]


@dataclass(frozen=True)
class Step:
    """One frame of an animation and how long it stays up."""

    frame: Frame
    hold: float = 0.0


def rgb(colour: str) -> RGB:
    """(r, g, b) from '#rrggbb'."""
    value = colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def marker_led(position: int, low: int, high: int, count: int) -> int:
    """The LED of a track position: the ends on the end LEDs, the rest spread evenly."""
    if high <= low:
        return 0
    return round((position - low) * (count - 1) / (high - low))


def _oriented(spans: list[Span], count: int, orientation: Orientation) -> Frame:
    """Spans laid out from LED 0 (side A first) or mirrored (side B at LED 0)."""
    if orientation == "b-first":
        spans = [Span(count - s.stop, count - s.start, s.colour) for s in reversed(spans)]
    return tuple(s for s in spans if s.stop > s.start)


def marker_frame(bar: BarPayload, led: int, count: int, orientation: Orientation) -> Frame:
    """Side A's colour below the marker LED, the marker, side B's colour above it."""
    spans = [
        Span(0, led, rgb(bar.colour_a)),
        Span(led, led + 1, MARKER),
        Span(led + 1, count, rgb(bar.colour_b)),
    ]
    return _oriented(spans, count, orientation)


def kind_of(bar: BarPayload) -> str:
    """The tracker's kind; a bar between two sides where the payload does not say."""
    return bar.tracker.kind if bar.tracker is not None else "two-sided"


def bar_frame(bar: BarPayload, count: int, orientation: Orientation) -> Frame:
    """The tracker at rest, as its kind shows it."""
    kind = kind_of(bar)
    if kind == "none":
        return (Span(0, count, DARK),)
    if kind != "two-sided":
        return parts_frame(bar, count, orientation)
    return marker_frame(bar, marker_led(bar.position, bar.low, bar.high, count), count, orientation)


def parts_frame(bar: BarPayload, count: int, orientation: Orientation) -> Frame:
    """Each part (a clock, a pending action) an equal stretch of LEDs, one dark LED apart:
    its filled share lit in A's colour, the rest dimly in B's; all dark when there is none."""
    parts = bar.segments[:MAX_PARTS]
    if not parts:
        return (Span(0, count, DARK),)
    width = max((count - len(parts) + 1) // len(parts), 1)
    spans: list[Span] = []
    for index, (_label, filled, size) in enumerate(parts):
        start = index * (width + 1)
        lit = round(width * max(0, min(filled, size)) / size) if size > 0 else 0
        spans += [
            Span(start, start + lit, rgb(bar.colour_a)),
            Span(start + lit, start + width, dim(rgb(bar.colour_b))),
            Span(start + width, min(start + width + 1, count), DARK),
        ]
    return _oriented([s for s in spans if s.start < count], count, orientation)


def dim(colour: RGB) -> RGB:
    """`colour` at a DIM-th of its brightness."""
    return (colour[0] // DIM, colour[1] // DIM, colour[2] // DIM)


def walk_leds(start: int, end: int) -> list[int]:
    """The LEDs a walk from `start` to `end` shows: every one on a short walk, else
    WALK_FRAMES evenly spread, the last on `end`."""
    frames = min(abs(end - start), WALK_FRAMES) or 1
    return [start + round((end - start) * k / frames) for k in range(1, frames + 1)]


def motion_steps(bar: BarPayload, before: int, count: int, orientation: Orientation) -> list[Step]:
    """The marker walking from `before` to the bar's position, in at most WALK_FRAMES frames."""
    start = marker_led(before, bar.low, bar.high, count)
    end = marker_led(bar.position, bar.low, bar.high, count)
    leds = walk_leds(start, end)
    return [Step(marker_frame(bar, led, count, orientation), FRAME_GAP) for led in leds]


def rout_steps(bar: BarPayload, count: int, orientation: Orientation) -> list[Step]:
    """The whole strip flashing the winner's colour three times, then the bar."""
    winner = bar.colour_b if bar.routed == "a" else bar.colour_a
    flash = (Span(0, count, rgb(winner)),)
    dark = (Span(0, count, DARK),)
    return [Step(frame, FRAME_GAP) for _ in range(FLASHES) for frame in (flash, dark)] + [
        Step(bar_frame(bar, count, orientation))
    ]


def animation(
    previous: BarPayload | None, bar: BarPayload, count: int, orientation: Orientation
) -> list[Step]:
    """What the strip shows for a new bar: a rout, a motion, or just the bar (always, for a
    tracker that is not two-sided)."""
    if previous is None or previous.system != bar.system or previous.high != bar.high:
        return [Step(bar_frame(bar, count, orientation))]
    if kind_of(bar) != "two-sided":
        return [Step(bar_frame(bar, count, orientation))]
    if bar.routed is not None and previous.routed is None:
        return [
            *motion_steps(bar, previous.position, count, orientation),
            *rout_steps(bar, count, orientation),
        ]
    if bar.position != previous.position:
        return motion_steps(bar, previous.position, count, orientation)
    return [Step(bar_frame(bar, count, orientation))]


def pixels(frame: Frame, count: int) -> list[RGB]:
    """One colour per LED, for strips driven pixel by pixel."""
    out = [DARK] * count
    for span in frame:
        out[span.start : span.stop] = [span.colour] * (span.stop - span.start)
    return out


def wled_state(frame: Frame, segments: int = WLED_SEGMENTS) -> dict[str, object]:
    """WLED's JSON API state: one solid segment per span, unused segments removed (stop 0),
    shown at once (`tt` 0: for this message only, WLED's own transition is left as its owner
    set it) at the brightness WLED has (no `bri`: its owner's)."""
    seg: list[dict[str, object]] = [
        {"id": i, "start": s.start, "stop": s.stop, "col": [list(s.colour)], "fx": 0, "on": True}
        for i, s in enumerate(frame)
    ]
    seg += [{"id": i, "stop": 0} for i in range(len(frame), segments)]
    return {"on": True, "tt": 0, "seg": seg}
