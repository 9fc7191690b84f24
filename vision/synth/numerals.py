"""Paint numeral dice (d6, d8, d10, d10-tens, d12, d20) in 3D: a solid seen by a pinhole camera."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import cv2
import numpy as np

from tidetower.vision.kinds import face_text, face_values
from tidetower.vision.synth.solids import Solid, solid

Colour = tuple[int, int, int]
FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_PLAIN,
)
"""Stroke fonts OpenCV draws without font files: thin, bold, serif and plain."""
TEXT_SIZE = {"d6": 0.9, "d8": 1.0, "d10": 1.0, "d10-tens": 1.05, "d12": 0.85, "d20": 1.05}
"""Numeral width-or-height as a share of the face's inscribed circle's diameter."""
TEX = 96
"""Side of the square the numeral is drawn in before it is laid on its face."""


@dataclass(frozen=True)
class NumeralLook:
    """How one die is made: plastic and ink colours, font, stroke, 6/9 marker, shine."""

    body: Colour
    ink: Colour
    font: int = cv2.FONT_HERSHEY_SIMPLEX
    stroke: float = 0.1
    """Stroke width as a share of the numeral's height."""
    marker: str = "underline"
    """How 6 and 9 are told apart: "underline" or "dot"."""
    shine: float = 0.0
    second: Colour | None = None
    """A second plastic colour swirled into the body (marbled dice)."""
    glow: float = 1.0
    """How much brighter than its light the plastic shows: fluorescent dice glow."""
    layout: int | None = None
    """Seed of the one numbering this die has (opposite faces summing as on real dice), so
    each throw shows the same neighbours around a face; None: a new numbering each throw."""


@dataclass(frozen=True)
class Camera:
    """A pinhole looking straight down at the tray: its image centre and height in pixels."""

    cx: float
    cy: float
    height: float


def _turn_to_top(normal: np.ndarray, spin: float) -> np.ndarray:
    """Return the rotation taking a face normal to straight up, then spinning about up."""
    up = np.array([0.0, 0.0, 1.0])
    axis = np.cross(normal, up)
    s, c = float(np.linalg.norm(axis)), float(np.dot(normal, up))
    if s < 1e-9:
        r = np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    else:
        k = axis / s
        kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
        r = np.eye(3) + s * kx + (1 - c) * kx @ kx
    cs, sn = np.cos(spin), np.sin(spin)
    return np.asarray(np.array([[cs, -sn, 0], [sn, cs, 0], [0, 0, 1]]) @ r)


@dataclass(frozen=True)
class Pose:
    """A die's solid laid in the world: world vertices, the face values, the camera."""

    shape: Solid
    world: np.ndarray
    values: tuple[int, ...]
    camera: Camera

    def project(self, points: np.ndarray) -> np.ndarray:
        """Return image pixels of world points (z up, floor at 0, floor pixels at scale 1)."""
        cam = self.camera
        k = cam.height / np.maximum(cam.height - points[:, 2], 1.0)
        return np.stack(
            [cam.cx + (points[:, 0] - cam.cx) * k, cam.cy + (points[:, 1] - cam.cy) * k], axis=1
        ).astype(np.float32)

    def visible(self) -> list[int]:
        """Return the faces turned towards the camera."""
        eye = np.array([self.camera.cx, self.camera.cy, self.camera.height])
        out = []
        for f, idx in enumerate(self.shape.faces):
            pts = self.world[list(idx)]
            n = np.cross(pts[1] - pts[0], pts[2] - pts[0])
            centre = pts.mean(axis=0)
            if float(np.dot(n, centre - self.world.mean(axis=0))) < 0:
                n = -n
            if float(np.dot(n, eye - centre)) > 1e-6:
                out.append(f)
        return out


def pose_die(
    rng: np.random.Generator,
    kind: str,
    value: int,
    centre: tuple[float, float],
    size: float,
    camera: Camera,
    layout: int | None = None,
) -> Pose:
    """Lay a die of `kind` showing `value` so its top face lands near `centre` in the image;
    `size` is its circumscribed diameter in floor pixels. A `layout` numbers its faces as
    one physical die is numbered (`numbering`)."""
    shape = solid(kind)
    if layout is None:
        values = list(face_values(kind))
        top = int(rng.integers(len(shape.faces)))
        others = [v for v in values if v != value]
        rng.shuffle(others)
        assigned = [*others[:top], value, *others[top:]]
    else:
        assigned = list(numbering(kind, layout))
        top = assigned.index(value)
    turn = _turn_to_top(shape.normal(top), float(rng.uniform(0, 2 * np.pi)))
    local = shape.vertices @ turn.T * (size / 2)
    local[:, 2] -= local[:, 2].min()
    height = float(local[:, 2].max())
    k = (camera.height - height) / camera.height  # where on the floor the top's centre must be
    x = camera.cx + (centre[0] - camera.cx) * k
    y = camera.cy + (centre[1] - camera.cy) * k
    world = local + np.array([x, y, 0.0]) - np.array([*local[:, :2].mean(axis=0), 0.0])
    return Pose(shape, world, tuple(assigned[: len(shape.faces)]), camera)


@cache
def numbering(kind: str, layout: int) -> tuple[int, ...]:
    """Return the value on each face of one die: opposite faces pair the lowest value with
    the highest, as real dice do, the pairs laid out by the `layout` seed."""
    shape = solid(kind)
    values = sorted(face_values(kind))
    pairs = [(values[i], values[-1 - i]) for i in range(len(values) // 2)]
    order = np.random.default_rng(layout).permutation(len(pairs))
    normals = [shape.normal(f) for f in range(len(shape.faces))]
    assigned = [0] * len(shape.faces)
    free = list(range(len(shape.faces)))
    for k in order:
        face = free.pop(0)
        twin = min(free, key=lambda f: float(np.dot(normals[face], normals[f])))
        free.remove(twin)
        assigned[face], assigned[twin] = pairs[k]
    return tuple(assigned)


def _face_frame(pose: Pose, face: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Return a face's centre, its numeral's up and right directions, and its inradius."""
    idx = list(pose.shape.faces[face])
    pts = pose.world[idx]
    centre = pts.mean(axis=0)
    n = np.cross(pts[1] - pts[0], pts[2] - pts[0])
    n = n / np.linalg.norm(n)
    if float(np.dot(n, centre - pose.world.mean(axis=0))) < 0:
        n = -n
    corner = pose.shape.up[face]
    toward = pose.world[corner] if corner >= 0 else (pts[0] + pts[1]) / 2
    up = toward - centre
    up = up - n * float(np.dot(up, n))
    up = up / np.linalg.norm(up)
    right = np.cross(n, up)
    inradius = min(_line_distance(centre, pts[i], pts[(i + 1) % len(pts)]) for i in range(len(pts)))
    return centre, up, right, inradius


def _line_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Return the distance from a point to the line through a and b."""
    d = (b - a) / np.linalg.norm(b - a)
    return float(np.linalg.norm((p - a) - d * float(np.dot(p - a, d))))


def numeral_texture(text: str, look: NumeralLook, marked: bool) -> np.ndarray:
    """Return a TEX x TEX float mask of a numeral, centred, with its 6/9 marker if `marked`."""
    tex = np.zeros((TEX, TEX), np.uint8)
    (w, h), _ = cv2.getTextSize(text, look.font, 1.0, 1)
    scale = 0.8 * TEX / max(w, h * 1.35)
    thick = max(1, round(look.stroke * h * scale))
    (w, h), _ = cv2.getTextSize(text, look.font, scale, thick)
    x, y = (TEX - w) // 2, (TEX + h) // 2
    cv2.putText(tex, text, (x, y), look.font, scale, 255, thick, cv2.LINE_AA)
    if marked and look.marker == "underline":
        gap = y + max(2, thick)
        cv2.line(tex, (x, gap + thick), (x + w, gap + thick), 255, thick, cv2.LINE_AA)
    elif marked:
        cv2.circle(tex, (x + w + thick, y - thick // 2), max(2, thick), 255, -1, cv2.LINE_AA)
    return tex.astype(np.float32) / 255.0


def _marked(kind: str, value: int) -> bool:
    """Return whether a face carries the mark that tells 6 from 9 (and 66-like twins)."""
    return kind != "d10-tens" and value in (6, 9)


@dataclass(frozen=True)
class Light:
    """Where the light comes from (unit vector towards it) and how flat it is."""

    towards: np.ndarray
    ambient: float = 0.45


def paint_die(
    canvas: np.ndarray, pose: Pose, look: NumeralLook, light: Light, rng: np.random.Generator
) -> np.ndarray:
    """Paint a posed die onto a float BGR canvas; return its outline in image pixels."""
    outline = cv2.convexHull(pose.project(pose.world)).reshape(-1, 2)
    x0, y0 = np.floor(outline.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(outline.max(axis=0)).astype(int) + 3
    h, w = canvas.shape[:2]
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return np.asarray(outline)
    view = canvas[y0:y1, x0:x1]
    offset = np.array([x0, y0], np.float32)
    body = _body_paint(view.shape[:2], look, rng)
    for face in pose.visible():
        _paint_face(view, pose, face, look, light, body, offset)
    if look.shine > 0:
        _shine(view, pose, look.shine, offset, rng)
    return np.asarray(outline)


def _body_paint(size: tuple[int, ...], look: NumeralLook, rng: np.random.Generator) -> np.ndarray:
    """Return the plastic's colour over a region: plain, or swirled with a second colour."""
    h, w = size[0], size[1]
    paint = np.broadcast_to(np.array(look.body, np.float32), (h, w, 3))
    if look.second is None:
        return np.asarray(paint)
    swirl = cv2.resize(rng.random((5, 5)).astype(np.float32), (w, h))[..., None]
    return np.asarray(paint * swirl + np.array(look.second, np.float32) * (1 - swirl))


def _paint_face(
    view: np.ndarray,
    pose: Pose,
    face: int,
    look: NumeralLook,
    light: Light,
    body: np.ndarray,
    offset: np.ndarray,
) -> None:
    """Fill one visible face, shaded by the light, and lay its numeral on it."""
    idx = list(pose.shape.faces[face])
    poly = pose.project(pose.world[idx]) - offset
    centre, up, right, inradius = _face_frame(pose, face)
    normal = np.cross(right, up)
    lit = light.ambient + (1 - light.ambient) * max(0.0, float(np.dot(normal, light.towards)))
    mask = np.zeros(view.shape[:2], np.float32)
    cv2.fillPoly(mask, [np.round(poly * 16).astype(np.int32)], 1.0, cv2.LINE_AA, 4)
    mask = mask[..., None]
    view[:] = view * (1 - mask) + np.minimum(body * lit * look.glow, 255.0) * mask
    value = pose.values[face]
    kind = _kind_of(pose)
    half = inradius * TEXT_SIZE.get(kind, 0.6)
    corners = np.array(
        [
            centre - half * right + half * up,
            centre + half * right + half * up,
            centre + half * right - half * up,
            centre - half * right - half * up,
        ]
    )
    target = pose.project(corners) - offset
    source = np.array([[0, 0], [TEX, 0], [TEX, TEX], [0, TEX]], np.float32)
    warp = cv2.getPerspectiveTransform(source, target.astype(np.float32))
    tex = numeral_texture(face_text(kind, value), look, _marked(kind, value))
    ink = cv2.warpPerspective(tex, warp, (view.shape[1], view.shape[0]), flags=cv2.INTER_LINEAR)
    ink = ink[..., None] * mask
    view[:] = view * (1 - ink) + np.array(look.ink, np.float32) * min(1.0, lit * 1.1) * ink


def _kind_of(pose: Pose) -> str:
    """Return the die kind a pose's values belong to."""
    faces = len(pose.shape.faces)
    if faces == 10:
        return "d10-tens" if max(pose.values) >= 10 else "d10"
    return f"d{faces}"


def _shine(
    view: np.ndarray, pose: Pose, strength: float, offset: np.ndarray, rng: np.random.Generator
) -> None:
    """Add a soft specular spot somewhere on the die."""
    pts = pose.project(pose.world) - offset
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    at = lo + (hi - lo) * rng.uniform(0.25, 0.75, 2)
    radius = float((hi - lo).mean()) * rng.uniform(0.06, 0.15)
    spot = np.zeros(view.shape[:2], np.float32)
    cv2.circle(spot, (round(float(at[0])), round(float(at[1]))), max(1, round(radius)), 1.0, -1)
    spot = cv2.GaussianBlur(spot, (0, 0), max(radius * 0.6, 0.5))[..., None] * strength
    view[:] = view * (1 - spot) + 255.0 * spot
