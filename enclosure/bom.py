"""The bill of materials: what to buy besides the printed parts, worked out from the
parameters (pure: the counts of screws match the holes the parts have, tests check that)."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass

from tidetower.enclosure.chute import chute
from tidetower.enclosure.fit import ARM, tide_sections
from tidetower.enclosure.geometry import MAST, layout
from tidetower.enclosure.params import EnclosureParams

CABLES = (200, 300, 500, 1000)
"""Camera cable lengths on sale (mm)."""
SLACK = 80.0
"""Camera cable beyond its path, for the folds and the connectors (mm)."""
FASTENERS = {
    "M2 x 10 screw and nut": (4, "the camera board to its plate"),
    "M3 x 10 self-tapping screw": (
        4,
        "the camera plate to the arm (2), the Pi plate to the mast (2)",
    ),
    "M3 x 30 self-tapping screw": (2, "the arm onto the mast's top"),
    "M2.5 x 6 screw": (4, "the Pi to its plate (cuts its thread in the standoffs)"),
    "M3 x 30 screw and nut": (1, "locks the mast in the tray's socket"),
    "cable tie, 2.5 mm": (4, "cables to the Pi plate"),
}
"""Fasteners by kind: how many and what for."""


@dataclass(frozen=True)
class Item:
    """One line of the bill."""

    item: str
    quantity: str
    note: str


def camera_cable(params: EnclosureParams) -> tuple[float, int]:
    """The ribbon's path from the camera to the Pi (mm), and the shortest cable on sale."""
    lay = layout(params)
    along = lay.mast_x + MAST[0] / 2
    down = lay.arm_bottom + ARM / 2 - (params.tray_wall_height + 4 + 32)
    path = along + down + SLACK
    return (path, next((c for c in CABLES if c >= path), CABLES[-1]))


def bought(params: EnclosureParams) -> list[Item]:
    """Everything to buy, with quantities from the parameters."""
    lay, c = layout(params), chute(params)
    path, cable = camera_cable(params)
    strip = 2 * lay.tray_outer[0]
    window = params.light_strip_width + 4
    tide_mm = params.tide_leds * 1000 / params.tide_leds_per_m
    tide_amps = math.ceil(params.tide_leds * 0.06 * 10) / 10
    sections, _ = tide_sections(params)
    rows = [
        ("Raspberry Pi 4 Model B or Raspberry Pi 5, 2 GB or more", "1", "runs the tower"),
        ("USB-C power supply", "1", "Pi 5: 5 V 5 A; Pi 4: 5 V 3 A"),
        ("microSD card, 16 GB or more", "1", "Raspberry Pi OS and the tower"),
        (lay.camera.title, "1", f"lens {lay.lens_height:.0f} mm over the tray floor"),
        (
            f"camera cable, {cable} mm",
            "1",
            f"path {path:.0f} mm; Pi 4: 15-pin, Pi 5: 22-to-15-pin",
        ),
        (
            "IR break-beam pair, 3 mm LEDs (e.g. Adafruit 2167)",
            "1",
            f"across the tower's exit ({c.width:.0f} mm)",
        ),
        ("10 kΩ resistor", "1", "break-beam pull-up for a lead over 30 cm"),
        (
            f"white LED strip, {params.light_strip_width:.0f} mm wide, 5 V or 12 V",
            f"2 x {strip:.0f} mm",
            "the light bars",
        ),
        (
            "logic-level N-MOSFET (AO3400, IRLZ44N), 100 Ω, 100 kΩ",
            "1 each",
            "the tray light on its PWM pin",
        ),
        (
            f"diffuser strip, 2 mm opal acrylic or natural PETG, {window:.0f} mm wide",
            f"2 x {strip:.0f} mm",
            "in the light bars' slots",
        ),
        (
            f"WS2812B strip, {params.tide_leds_per_m} LED/m, {params.tide_strip_width:.0f} mm wide",
            f"{params.tide_leds} LEDs ({tide_mm:.0f} mm)",
            "the Tide bar",
        ),
        (
            "5 V supply for the Tide bar",
            "1",
            f"{tide_amps} A at full white (about half at brightness 128)",
        ),
        ("74AHCT125 level shifter, 330 Ω, 1000 µF", "1 each", "the Tide bar's data line"),
        (
            f"diffuser strip, 2 mm, {params.tide_strip_width + 3:.0f} mm wide",
            f"{tide_mm:.0f} mm",
            "in the Tide bar's slot",
        ),
        (
            "double-sided foam tape, 12 mm",
            f"{tide_mm:.0f} mm",
            f"the Tide bar's {sections} sections on the table's edge",
        ),
    ]
    items = [Item(*row) for row in rows]
    items += [Item(name, str(n), why) for name, (n, why) in FASTENERS.items()]
    return items


def markdown(items: list[Item], printed: list[tuple[str, int, str]]) -> str:
    """The bill as Markdown tables: printed parts (name, count, note), then bought ones."""
    lines = ["## Printed parts", "", "| part | count | note |", "|---|---|---|"]
    lines += [f"| {name} | {count} | {note} |" for name, count, note in printed]
    lines += ["", "## To buy", "", "| item | quantity | for |", "|---|---|---|"]
    lines += [f"| {i.item} | {i.quantity} | {i.note} |" for i in items]
    return "\n".join(lines) + "\n"


def csv_text(items: list[Item], printed: list[tuple[str, int, str]]) -> str:
    """The bill as CSV: kind, item, quantity, note."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["kind", "item", "quantity", "note"])
    writer.writerows(("printed", name, count, note) for name, count, note in printed)
    writer.writerows(("bought", i.item, i.quantity, i.note) for i in items)
    return out.getvalue()
