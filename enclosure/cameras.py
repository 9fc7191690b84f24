"""The Raspberry Pi cameras the mount takes, with their datasheets' figures."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CameraSpec:
    """A camera board: its outline, mounting holes, field of view and sensor shape."""

    title: str
    board: tuple[float, float]
    """Board width (along the picture's rows) and height (mm)."""
    holes: tuple[float, float]
    """Mounting-hole spacing along the board's width and height (mm)."""
    hole_inset: float
    """Distance of the holes from the board's top and side edges (mm)."""
    screw: str
    """The mounting screw."""
    fov: tuple[float, float]
    """Horizontal and vertical field of view of the whole sensor (degrees)."""
    sensor: tuple[int, int]
    """The sensor's full resolution: its aspect decides what a capture size crops."""
    depth: float
    """Board back to lens front (mm), the module's thickness."""


CAMERAS: dict[str, CameraSpec] = {
    "cm3": CameraSpec(
        title="Raspberry Pi Camera Module 3 (standard lens)",
        board=(25.0, 24.0),
        holes=(21.0, 12.5),
        hole_inset=2.0,
        screw="M2",
        fov=(66.0, 41.0),
        sensor=(4608, 2592),
        depth=11.5,
    ),
    "v2": CameraSpec(
        title="Raspberry Pi Camera Module v2",
        board=(25.0, 23.86),
        holes=(21.0, 12.5),
        hole_inset=2.0,
        screw="M2",
        fov=(62.2, 48.8),
        sensor=(3280, 2464),
        depth=9.0,
    ),
}
"""Figures from the Raspberry Pi camera datasheets (board, holes, FoV, module thickness)."""
