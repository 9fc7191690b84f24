"""The printable parts: what each is, how many, how it lies on the bed, and where it sits in
the assembled tower."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import build123d as bd

from tidetower.enclosure.cad.shapes import Solid
from tidetower.enclosure.params import EnclosureParams


@dataclass(frozen=True)
class Part:
    """One printable part, drawn where it sits in the tower (world frame)."""

    name: str
    """File name stem: tower, ramp, tray ..."""
    title: str
    count: int
    solid: Solid
    bed: tuple[float, float, float]
    """Rotation (degrees about x, y, z) that lays the part on the bed as it prints."""
    settings: str
    """How to print it: orientation, supports, anything particular."""
    supports: bool = False
    """True when it needs supports; every overhang of a part without is 50° or less."""
    placed: tuple[Solid, ...] = ()
    """Copies of the part placed in the assembly (empty: the part is not in it)."""

    def on_bed(self) -> Solid:
        """The part turned as it prints, its lowest point on the bed at z = 0."""
        turned = bd.Rot(*self.bed) * self.solid
        low = turned.bounding_box().min
        return bd.Pos(-low.X, -low.Y, -low.Z) * turned


def up_for(bed: tuple[float, float, float]) -> tuple[float, float, float]:
    """The direction in the part's own frame that points up on the bed."""
    v = bd.Rot(*bed).inverse() * bd.Vertex(0, 0, 1)
    return (round(v.X, 9), round(v.Y, 9), round(v.Z, 9))


def all_parts(params: EnclosureParams) -> list[Part]:
    """Every part of the tower, each built from the parameters."""
    from tidetower.enclosure.cad.parts import camera, light, mast, pi, ramp, tide, tower, tray

    makers: list[Callable[[EnclosureParams], list[Part]]] = [
        tower.parts, ramp.parts, tray.parts, mast.parts, camera.parts, light.parts, pi.parts,
        tide.parts,
    ]  # fmt: skip
    return [part for make in makers for part in make(params)]
