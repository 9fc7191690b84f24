"""Geometric checks of a part's mesh: wall thickness by casting rays inward, overhangs by the
facets' normals as the part lies on the bed, and whether an STL file is watertight."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from tidetower.enclosure.cad.mesh import Mesh

EDGE_CLEAR = 2.0
"""Samples this close to a face's edge are left out: at a corner any wall thins to nothing."""
STL_RECORD = np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)), ("attribute", "<u2")])


def overhang_area(m: Mesh, limit_deg: float = 50.0) -> float:
    """Area (mm²) of facets facing down more steeply than `limit_deg` from the vertical,
    except those lying on the bed (z = 0)."""
    steep = -m.normals[:, 2] > math.sin(math.radians(limit_deg)) + 1e-6
    on_bed = (m.triangles[:, :, 2] < 1e-3).all(axis=1)
    return float(m.areas[steep & ~on_bed].sum())


def thinnest_wall(m: Mesh, per_face: int = 60, seed: int = 0) -> float:
    """The thinnest material found square to the surface, from points sampled on every face
    (away from its edges), each casting a ray inward to where it leaves the part (mm)."""
    rng = np.random.default_rng(seed)
    points, normals = [], []
    for face in np.unique(m.faces):
        tris = m.triangles[m.faces == face]
        p, n = _sample(tris, per_face, rng)
        keep = _distance_to_edges(p, _boundary(tris)) >= EDGE_CLEAR
        points.append(p[keep])
        normals.append(n[keep])
    origins, directions = np.concatenate(points), -np.concatenate(normals)
    return float(
        min(_first_hit(m.triangles, o, d) for o, d in zip(origins, directions, strict=True))
    )


def _sample(
    tris: np.ndarray, count: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Points spread over triangles by area, with each triangle's normal."""
    cross = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    area = np.linalg.norm(cross, axis=1)
    pick = rng.choice(len(tris), size=count, p=area / area.sum())
    a, b = rng.random(count), rng.random(count)
    flip = a + b > 1
    a[flip], b[flip] = 1 - a[flip], 1 - b[flip]
    t = tris[pick]
    p = t[:, 0] + a[:, None] * (t[:, 1] - t[:, 0]) + b[:, None] * (t[:, 2] - t[:, 0])
    return p, cross[pick] / area[pick, None]


def _boundary(tris: np.ndarray) -> np.ndarray:
    """A face's outline: the edges (k, 2, 3) that only one of its triangles has."""
    corners, ids = np.unique(np.round(tris.reshape(-1, 3), 4), axis=0, return_inverse=True)
    ids = ids.reshape(-1, 3)
    edges = np.sort(np.concatenate([ids[:, [0, 1]], ids[:, [1, 2]], ids[:, [2, 0]]]), axis=1)
    pairs, counts = np.unique(edges, axis=0, return_counts=True)
    return np.asarray(corners[pairs[counts == 1]])


def _distance_to_edges(points: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """Each point's distance to the nearest of the segments."""
    if len(segments) == 0 or len(points) == 0:
        return np.full(len(points), np.inf)
    a, b = segments[:, 0], segments[:, 1]
    ab = b - a
    t = np.einsum("psk,sk->ps", points[:, None, :] - a[None], ab) / np.maximum(
        np.einsum("sk,sk->s", ab, ab), 1e-12
    )
    nearest = a[None] + np.clip(t, 0, 1)[..., None] * ab[None]
    return np.asarray(np.linalg.norm(points[:, None, :] - nearest, axis=2).min(axis=1))


def _first_hit(tris: np.ndarray, origin: np.ndarray, direction: np.ndarray) -> float:
    """Distance along a ray to the nearest triangle it crosses (Möller-Trumbore)."""
    e1, e2 = tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]
    p = np.cross(direction, e2)
    det = np.einsum("ij,ij->i", e1, p)
    ok = np.abs(det) > 1e-12
    inv = np.where(ok, 1 / np.where(ok, det, 1), 0)
    s = origin - tris[:, 0]
    u = np.einsum("ij,ij->i", s, p) * inv
    q = np.cross(s, e1)
    v = (q @ direction) * inv
    t = np.einsum("ij,ij->i", e2, q) * inv
    hit = ok & (u >= 0) & (v >= 0) & (u + v <= 1) & (t > 1e-6)
    return float(t[hit].min()) if hit.any() else math.inf


def stl_is_watertight(path: Path) -> bool:
    """Whether a binary STL is one closed surface: every edge in exactly two triangles, once
    each way."""
    data = path.read_bytes()
    count = int(np.frombuffer(data, "<u4", 1, 80)[0])
    corners = np.frombuffer(data, STL_RECORD, count, 84)["corners"].astype(float)
    _, ids = np.unique(np.round(corners.reshape(-1, 3), 4), axis=0, return_inverse=True)
    ids = ids.reshape(-1, 3)
    directed = np.concatenate([ids[:, [0, 1]], ids[:, [1, 2]], ids[:, [2, 0]]])
    pairs, counts = np.unique(directed, axis=0, return_counts=True)
    if (counts != 1).any():
        return False
    undirected = np.unique(np.sort(pairs, axis=1), axis=0, return_counts=True)[1]
    return bool((undirected == 2).all())
