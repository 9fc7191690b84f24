"""Whether a set of parameters makes a tower that prints and works: each problem in words,
naming the parameter to change."""

from __future__ import annotations

import math

from tidetower.enclosure.chute import chute
from tidetower.enclosure.geometry import CLEARANCE, MAST, SPREAD, layout
from tidetower.enclosure.params import EnclosureParams

ARM = 22.0
"""The camera arm's height (mm)."""
SECTION_MAX = 200.0
"""The Tide bar's longest section (mm); it prints standing, so also under the printer's height."""
END = 5.0
"""Channel beyond the strip's last LED at each end of the Tide bar (mm)."""


def column_height(params: EnclosureParams) -> float:
    """The camera mast's column, from its socket's floor to the arm (mm); it prints standing."""
    return layout(params).arm_bottom


def arm_length(params: EnclosureParams) -> float:
    """The camera arm, from its tip over the camera to the column's far face (mm)."""
    lay = layout(params)
    return lay.mast_x + MAST[0] + lay.camera.board[0] / 2 + 2 * params.wall


def tide_sections(params: EnclosureParams) -> tuple[int, float]:
    """How many Tide-bar sections, and each one's length (mm)."""
    total = params.tide_leds * 1000 / params.tide_leds_per_m + 2 * END
    longest = min(SECTION_MAX, params.printer[2])
    count = math.ceil(total / longest)
    return (count, total / count)


def tray_reach(params: EnclosureParams) -> float:
    """The tray with its mast socket, along x (mm)."""
    lay = layout(params)
    return lay.tray_outer[0] + lay.mast_x + MAST[0] + CLEARANCE + params.wall


def lies_on(outline: tuple[float, float], bed: list[float]) -> bool:
    """Whether an outline fits a bed, turned either way."""
    return all(a <= b for a, b in zip(sorted(outline), sorted(bed), strict=True))


def _room(params: EnclosureParams) -> str | None:
    """The floor must be SPREAD times the dice's footprint for them to settle apart."""
    floor = params.tray_width * params.tray_depth
    need = SPREAD * (params.dice * params.die_size**2 + params.d20_size**2)
    if floor >= need:
        return None
    return (
        f"tray_width x tray_depth: {floor:.0f} mm² is too small for {params.dice} dice of "
        f"{params.die_size} mm and a d20 to settle apart (needs {need:.0f} mm²)"
    )


def _readable(params: EnclosureParams) -> str | None:
    """The smallest die must span min_die_px."""
    px = layout(params).die_px()
    if px >= params.min_die_px:
        return None
    return (
        f"tray_width/tray_depth/capture: a {params.min_die} mm die would span {px:.0f} px, "
        f"under min_die_px {params.min_die_px}"
    )


def _printable(params: EnclosureParams) -> list[str]:
    """The tower and the mast print standing, the arm and the tray lying on the bed."""
    bed, height = sorted(params.printer[:2]), params.printer[2]
    found = []
    tower = chute(params).top + params.wall
    if tower > height:
        found.append(
            f"baffles/die_size/d20_size: the tower would be {tower:.0f} mm tall, over the "
            f"printer's {height:.0f} mm"
        )
    if column_height(params) > height:
        found.append(
            f"tray_width/tray_depth/capture: the camera mast would be "
            f"{column_height(params):.0f} mm tall, over the printer's {height:.0f} mm"
        )
    if not lies_on((arm_length(params), ARM), bed):
        found.append(f"tray_width: the camera arm would be {arm_length(params):.0f} mm long")
    if not lies_on((2 * layout(params).tray_outer[1], tray_reach(params)), bed):
        found.append(
            f"tray_width: the tray with its mast socket would be {tray_reach(params):.0f} mm, "
            f"over the printer's {bed[1]:.0f} mm bed"
        )
    return found


def problems(params: EnclosureParams) -> list[str]:
    """Every reason these parameters make no good tower (none: they do)."""
    found = [p for p in (_room(params), _readable(params)) if p is not None]
    return found + _printable(params)
