"""The derived geometry in words, for `tidetower enclosure geometry` and the docs."""

from __future__ import annotations

from tidetower.enclosure.chute import chute, die_diagonal
from tidetower.enclosure.geometry import (
    glare_in_picture,
    glare_pixels,
    layout,
    light_windows,
    shadow_band,
)
from tidetower.enclosure.params import EnclosureParams


def lines(params: EnclosureParams) -> list[str]:
    """What the parameters make, one fact a line."""
    lay, c = layout(params), chute(params)
    fx, fy = lay.footprint()
    w, h = params.capture
    return [
        f"camera: {lay.camera.title}, capture {w} x {h}",
        f"lens: {lay.lens_height:.1f} mm above the tray floor",
        f"picture at the floor: {2 * fx:.0f} x {2 * fy:.0f} mm "
        f"(tray floor {params.tray_width:.0f} x {params.tray_depth:.0f} mm)",
        f"a {params.min_die:.0f} mm die spans {lay.die_px():.1f} px "
        f"(at least {params.min_die_px:.0f} wanted)",
        f"light bars: {lay.light_offset:.1f} mm either side of the middle, "
        f"{params.light_height:.0f} mm up; their mirror image in the floor is "
        f"{'IN' if any(glare_in_picture(lay, r) for r in light_windows(lay)) else 'outside'} "
        f"the picture ({glare_pixels(lay, light_windows(lay))} of 4096 sample rays glare)",
        f"floor band each bar leaves to the other: {shadow_band(lay):.0f} mm",
        f"tower: {c.top + params.wall:.0f} mm tall, {params.baffles} baffles; a ball of "
        f"{c.ball:.1f} mm (1.5 x the {die_diagonal(params):.1f} mm die diagonal) passes",
    ]
