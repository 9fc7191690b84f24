"""The tracker drawn in a terminal, by its kind: a bar between two sides (A's colour below the
marker, B's above it), clocks, a count with what is pending, or nothing."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import click

from tidetower.engine.codec import dump
from tidetower.engine.rules import BarState
from tidetower.mqtt.payloads import TrackerBody
from tidetower.mqtt.views import tracker_body

A_CELL = "▓▓"  # distinct glyphs keep the sides apart where colour is off
B_CELL = "░░"
MARKER = "◆"
FILLED = "▓"
EMPTY = "░"


def _rgb(colour: str) -> tuple[int, int, int]:
    """(r, g, b) from '#rrggbb'."""
    value = colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def tracker_of(bar: BarState) -> TrackerBody:
    """What the bar's system says its tracker is; a bar between its sides if it says nothing."""
    known = tracker_body(dump(bar))
    plain = TrackerBody(
        kind="two-sided", name="the bar", ends=[bar.label_a, bar.label_b], position="Position"
    )
    return known or plain


def bar_cells(bar: BarState) -> str:
    """One cell per track position: A's colour below the marker, B's above it."""
    cells = []
    for position in range(bar.low, bar.high + 1):
        if position == bar.position:
            cells.append(click.style(MARKER + " ", fg="bright_white", bold=True))
        else:
            side_a = position < bar.position
            colour = bar.colour_a if side_a else bar.colour_b
            cells.append(click.style(A_CELL if side_a else B_CELL, fg=_rgb(colour)))
    return "".join(cells)


def _scale(bar: BarState, indent: int) -> str:
    """Numbers under the bar: the two ends and the marker's position."""
    width = 2 * (bar.high - bar.low + 1)
    line = [" "] * (width + 4)
    for position in (bar.low, bar.position, bar.high):
        text = str(position)
        at = 2 * (position - bar.low)
        line[at : at + len(text)] = list(text)
    return " " * indent + "".join(line).rstrip()


def two_sided(bar: BarState, tracker: TrackerBody) -> str:
    """Two lines: the bar between its ends' words and its scale; a rout is named."""
    low, high = [*tracker.ends, "", ""][:2]
    left, right = f"{low} ", f" {high}"
    text = left + bar_cells(bar) + right + "\n" + _scale(bar, len(left))
    if bar.routed is not None:
        routed = bar.label_a if bar.routed == "a" else bar.label_b
        text += "\n" + click.style(f"  {routed} routs!", bold=True)
    return text


def segment_line(bar: BarState, label: str, filled: int, size: int) -> str:
    """One part of a tracker: 'name ▓▓░░ 2/4', filled in A's colour."""
    shown = max(0, min(filled, size))
    cells = click.style(FILLED * shown, fg=_rgb(bar.colour_a)) + EMPTY * (size - shown)
    return f"{label} {cells} {filled}/{size}"


def clocks(bar: BarState, tracker: TrackerBody) -> str:
    """Each clock on a line of its own; the tracker's name and 'none' when there is none."""
    if not bar.segments:
        return f"{tracker.name}: none"
    return "\n".join(segment_line(bar, *segment) for segment in bar.segments)


def count(bar: BarState, tracker: TrackerBody) -> str:
    """The count's words (the low end's), when the next thing is due, and what is pending."""
    now, coming = [*tracker.ends, "", ""][:2]
    if not bar.segments:
        return now
    lines = [f"{now} · {coming} in {bar.position}" if coming else now]
    return "\n".join(lines + ["  " + segment_line(bar, *s) for s in bar.segments])


DRAWERS: Mapping[str, Callable[[BarState, TrackerBody], str]] = {
    "two-sided": two_sided,
    "clocks": clocks,
    "count": count,
    "none": lambda _bar, _tracker: "",
}
"""How each kind of tracker is drawn."""


def render_bar(bar: BarState, tracker: TrackerBody | None = None) -> str:
    """The tracker as its kind draws it (`tracker`: what it is; else its system's own)."""
    shown = tracker or tracker_of(bar)
    return DRAWERS[shown.kind](bar, shown)
