"""The Tide bar drawn in a terminal: A's footing in crimson, B's in teal, the marker between."""

from __future__ import annotations

import click

from tidetower.engine.rules import BarState

A_CELL = "▓▓"  # distinct glyphs keep the sides apart where colour is off
B_CELL = "░░"
MARKER = "◆"


def _rgb(colour: str) -> tuple[int, int, int]:
    """(r, g, b) from '#rrggbb'."""
    value = colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def bar_cells(bar: BarState) -> str:
    """One cell per track position: A's footing below the marker, B's above it."""
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


def render_bar(bar: BarState) -> str:
    """Two lines: the labelled bar and its scale; rout is named when it happens."""
    left = f"{bar.label_a} collapse "
    right = f" {bar.label_b} collapse"
    text = left + bar_cells(bar) + right + "\n" + _scale(bar, len(left))
    if bar.routed is not None:
        routed = bar.label_a if bar.routed == "a" else bar.label_b
        text += "\n" + click.style(f"  {routed} routs!", bold=True)
    return text
