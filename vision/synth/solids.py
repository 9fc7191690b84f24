"""The polyhedra of numeral dice: vertices, faces and each face's reading direction."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

import numpy as np

PHI = (1 + 5**0.5) / 2


@dataclass(frozen=True)
class Solid:
    """A convex die of unit circumradius: faces as vertex indices, each with its up vertex."""

    vertices: np.ndarray
    faces: tuple[tuple[int, ...], ...]
    up: tuple[int, ...]
    """For each face, the vertex its numeral's top points to (-1: towards an edge)."""

    def normal(self, face: int) -> np.ndarray:
        """Return the outward unit normal of a face."""
        pts = self.vertices[list(self.faces[face])]
        centre = pts.mean(axis=0)
        n = np.cross(pts[1] - pts[0], pts[2] - pts[0])
        n = n if float(np.dot(n, centre)) > 0 else -n
        return np.asarray(n / np.linalg.norm(n))

    def centre(self, face: int) -> np.ndarray:
        """Return the centroid of a face's vertices."""
        return np.asarray(self.vertices[list(self.faces[face])].mean(axis=0))


def _hull_faces(vertices: np.ndarray, size: int) -> tuple[tuple[int, ...], ...]:
    """Return the faces of a convex solid with `size`-gon faces, vertices in cyclic order."""
    faces: set[tuple[int, ...]] = set()
    for combo in itertools.combinations(range(len(vertices)), 3):
        a, b, c = vertices[list(combo)]
        n = np.cross(b - a, c - a)
        if np.linalg.norm(n) < 1e-9:
            continue
        side = (vertices - a) @ n
        if (side > 1e-6).any() and (side < -1e-6).any():
            continue
        on = np.nonzero(np.abs(side) < 1e-6)[0]
        if len(on) == size:
            faces.add(_cyclic(vertices, tuple(int(i) for i in on)))
    return tuple(sorted(faces))


def _cyclic(vertices: np.ndarray, idx: tuple[int, ...]) -> tuple[int, ...]:
    """Order a face's vertices around its centre."""
    pts = vertices[list(idx)]
    centre = pts.mean(axis=0)
    n = np.cross(pts[0] - centre, pts[1] - centre)
    if float(np.dot(n, centre)) < 0:
        n = -n
    if np.linalg.norm(n) < 1e-9:
        n = centre
    u = (pts[0] - centre) / np.linalg.norm(pts[0] - centre)
    v = np.cross(n / np.linalg.norm(n), u)
    angles = np.arctan2((pts - centre) @ v, (pts - centre) @ u)
    return tuple(idx[i] for i in np.argsort(angles))


def _unit(vertices: np.ndarray) -> np.ndarray:
    """Scale vertices so the farthest is 1 from the centre."""
    return np.asarray(vertices / np.linalg.norm(vertices, axis=1).max())


def _cube() -> Solid:
    v = _unit(np.array(list(itertools.product((-1, 1), repeat=3)), float))
    faces = _hull_faces(v, 4)
    return Solid(v, faces, tuple(-1 for _ in faces))


def _octahedron() -> Solid:
    v = np.array([p for i in range(3) for p in (np.eye(3)[i], -np.eye(3)[i])], float)
    faces = _hull_faces(v, 3)
    return Solid(v, faces, tuple(f[0] for f in faces))


def _icosahedron() -> Solid:
    base = [(0, s1, s2 * PHI) for s1 in (-1, 1) for s2 in (-1, 1)]
    v = _unit(np.array([p[i:] + p[:i] for p in base for i in range(3)], float))
    faces = _hull_faces(v, 3)
    return Solid(v, faces, tuple(f[0] for f in faces))


def _dodecahedron() -> Solid:
    cube = [tuple(float(x) for x in p) for p in itertools.product((-1, 1), repeat=3)]
    base = [(0.0, s1 / PHI, s2 * PHI) for s1 in (-1, 1) for s2 in (-1, 1)]
    v = _unit(np.array(cube + [p[i:] + p[:i] for p in base for i in range(3)], float))
    faces = _hull_faces(v, 5)
    return Solid(v, faces, tuple(f[0] for f in faces))


def _trapezohedron() -> Solid:
    """The d10: two apexes and a zig-zag ring; kites whose top points at their apex."""
    z0 = 0.105
    apex = _planar_apex(z0)
    ring = [
        (np.cos(np.radians(36 * k)), np.sin(np.radians(36 * k)), z0 if k % 2 == 0 else -z0)
        for k in range(10)
    ]
    v = _unit(np.array([(0, 0, apex), (0, 0, -apex), *ring], float))
    faces: list[tuple[int, ...]] = []
    for k in range(0, 10, 2):  # upper kites: apex, ring k, k+1, k+2
        faces.append((0, 2 + k, 2 + (k + 1) % 10, 2 + (k + 2) % 10))
        faces.append((1, 2 + (k + 1) % 10, 2 + (k + 2) % 10, 2 + (k + 3) % 10))
    faces = [_cyclic(v, f) for f in faces]
    return Solid(v, tuple(faces), tuple(0 if 0 in f else 1 for f in faces))


def _planar_apex(z0: float) -> float:
    """Return the apex height that makes a d10's kites flat, for ring heights +-z0."""

    def off_plane(h: float) -> float:
        top = np.array([0, 0, h])
        a = np.array([1.0, 0, z0])
        b = np.array([np.cos(np.radians(72)), np.sin(np.radians(72)), z0])
        mid = np.array([np.cos(np.radians(36)), np.sin(np.radians(36)), -z0])
        return float(np.dot(np.cross(a - top, b - top), mid - top))

    lo, hi = z0 + 1e-3, 10.0
    for _ in range(80):
        m = (lo + hi) / 2
        lo, hi = (m, hi) if off_plane(lo) * off_plane(m) > 0 else (lo, m)
    return (lo + hi) / 2


SOLIDS = {
    "d6": _cube,
    "d8": _octahedron,
    "d10": _trapezohedron,
    "d12": _dodecahedron,
    "d20": _icosahedron,
}


@cache
def solid(kind: str) -> Solid:
    """Return the solid of a numeral die kind (d10-tens shares the d10's)."""
    return SOLIDS["d10" if kind == "d10-tens" else kind]()
