"""Solids the parts are made of: boxes by their bounds, prisms from outlines, holes that print
without support. Every part is drawn in the world frame it is used in (geometry.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import build123d as bd

Point = tuple[float, float, float]
Solid = Any
"""A build123d Part (build123d is untyped here, see pyproject)."""

AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def box(x: tuple[float, float], y: tuple[float, float], z: tuple[float, float]) -> Solid:
    """A box between bounds."""
    size = (x[1] - x[0], y[1] - y[0], z[1] - z[0])
    return bd.Pos(x[0], y[0], z[0]) * bd.Box(*size, align=bd.Align.MIN)


def prism(outline: Sequence[tuple[float, float]], axis: str, span: tuple[float, float]) -> Solid:
    """An outline in the plane square to `axis` (given in the other two axes, in x-y-z order),
    extruded along `axis` from span[0] to span[1]."""
    others = [a for a in "xyz" if a != axis]
    points = []
    for u, v in outline:
        coords = {others[0]: u, others[1]: v, axis: span[0]}
        points.append((coords["x"], coords["y"], coords["z"]))
    face = bd.Face(bd.Wire.make_polygon(points, close=True))
    return bd.extrude(face, amount=span[1] - span[0], dir=AXES[axis])


def rod(diameter: float, start: Point, end: Point) -> Solid:
    """A round hole's solid from start to end (for a hole that prints along the bed's z)."""
    axis = bd.Vector(*end) - bd.Vector(*start)
    plane = bd.Plane(origin=start, z_dir=axis.normalized())
    return bd.Solid.make_cylinder(diameter / 2, axis.length, plane)


def teardrop(diameter: float, start: Point, end: Point, up: Point) -> Solid:
    """A horizontal hole with a 45° roof pointing `up` (the printer's up, in the part's own
    frame): it prints with no overhang past 45°."""
    r = diameter / 2
    axis = (bd.Vector(*end) - bd.Vector(*start)).normalized()
    lift = bd.Vector(*up)
    lift = (lift - axis * lift.dot(axis)).normalized()
    side = axis.cross(lift)
    s = math.sqrt(0.5)
    corners = [
        bd.Vector(*start) + side * (r * a) + lift * (r * b)
        for a, b in ((s, s), (0, 2 * s), (-s, s))
    ]
    roof = bd.Face(bd.Wire.make_polygon([(c.X, c.Y, c.Z) for c in corners] + [start], close=True))
    roof = bd.extrude(
        roof, amount=(bd.Vector(*end) - bd.Vector(*start)).length, dir=(axis.X, axis.Y, axis.Z)
    )
    return rod(diameter, start, end) + roof


def union(solids: Sequence[Solid]) -> Solid:
    """One solid of many."""
    result = solids[0]
    for solid in solids[1:]:
        result = result + solid
    return result


def cut(solid: Solid, holes: Sequence[Solid]) -> Solid:
    """A solid with holes taken out."""
    for hole in holes:
        solid = solid - hole
    return solid
