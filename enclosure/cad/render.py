"""Previews drawn with numpy and OpenCV: meshes projected orthographically, shaded flat, with
a depth buffer. Headless, and no renderer beyond what the tower already needs."""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from tidetower.enclosure.cad.mesh import Mesh

Colour = tuple[int, int, int]
VIEW = (0.55, -1.0, 0.8)
"""From where the previews look: in front (-y), right (+x) and above."""
SUPERSAMPLE = 2


def _basis(view: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Screen right, screen up and towards-the-viewer unit vectors."""
    toward = np.asarray(view, dtype=float)
    toward /= np.linalg.norm(toward)
    right = np.cross((0.0, 0.0, 1.0), toward)
    right /= np.linalg.norm(right)
    return right, np.cross(toward, right), toward


def render(
    meshes: Sequence[tuple[Mesh, Colour]],
    size: tuple[int, int] = (640, 480),
    view: Sequence[float] = VIEW,
) -> np.ndarray:
    """A BGR picture of the meshes, each in its colour, fitted to the frame."""
    right, up, toward = _basis(view)
    tris = np.concatenate([m.triangles for m, _ in meshes])
    normals = np.concatenate([m.normals for m, _ in meshes])
    colours = np.concatenate([np.tile(c, (len(m.triangles), 1)) for m, c in meshes])
    facing = normals @ toward > 0
    tris, normals, colours = tris[facing], normals[facing], colours[facing]
    screen = np.stack([tris @ right, -(tris @ up)], axis=-1)
    w, h = size[0] * SUPERSAMPLE, size[1] * SUPERSAMPLE
    low, high = screen.reshape(-1, 2).min(axis=0), screen.reshape(-1, 2).max(axis=0)
    scale = 0.9 * min(w / (high[0] - low[0]), h / (high[1] - low[1]))
    centre = (low + high) / 2
    pixels = (screen - centre) * scale + (w / 2, h / 2)
    light = toward + np.array((-0.3, 0.2, 0.8))
    light /= np.linalg.norm(light)
    shade = 0.35 + 0.65 * np.clip(normals @ light, 0, 1)
    depth = tris @ toward
    image = np.full((h, w, 3), 255, dtype=np.uint8)
    nearest = np.full((h, w), -np.inf)
    for i in range(len(tris)):
        _fill(image, nearest, pixels[i], depth[i], colours[i] * shade[i])
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)


def _fill(
    image: np.ndarray,
    nearest: np.ndarray,
    corners: np.ndarray,
    depth: np.ndarray,
    colour: np.ndarray,
) -> None:
    """Paint one triangle's pixels that are nearer than anything painted there yet."""
    h, w = nearest.shape
    x0, y0 = np.maximum(np.floor(corners.min(axis=0)).astype(int), 0)
    x1, y1 = np.minimum(np.ceil(corners.max(axis=0)).astype(int), (w - 1, h - 1))
    if x1 < x0 or y1 < y0:
        return
    ys, xs = np.mgrid[y0 : y1 + 1, x0 : x1 + 1] + 0.5
    (ax, ay), (bx, by), (cx, cy) = corners
    area = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
    if abs(area) < 1e-9:
        return
    wa = ((bx - xs) * (cy - ys) - (by - ys) * (cx - xs)) / area
    wb = ((cx - xs) * (ay - ys) - (cy - ys) * (ax - xs)) / area
    wc = 1 - wa - wb
    z = wa * depth[0] + wb * depth[1] + wc * depth[2]
    window = nearest[y0 : y1 + 1, x0 : x1 + 1]
    inside = (wa >= -1e-6) & (wb >= -1e-6) & (wc >= -1e-6) & (z > window)
    window[inside] = z[inside]
    image[y0 : y1 + 1, x0 : x1 + 1][inside] = colour.astype(np.uint8)


def label(image: np.ndarray, text: str) -> np.ndarray:
    """The picture with a caption in its top-left corner."""
    out = image.copy()
    cv2.putText(out, text, (10, 24), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (40, 40, 40), 1, cv2.LINE_AA)
    return out
