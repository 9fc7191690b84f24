"""Render a seeded, labelled photo of dice lying in a tray, seen from above."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np

from tidetower.engine.tray import Box
from tidetower.vision.kinds import face_values
from tidetower.vision.synth.faces import FACE_PAINTERS, ONE, SHIFT, FaceStyle, paint_side
from tidetower.vision.synth.looks import numeral_look, other_floor, throw_light
from tidetower.vision.synth.numerals import Camera, NumeralLook, paint_die, pose_die

Colour = tuple[int, int, int]
Placed = tuple[float, float, float, float]
"""A die's centre x, y, side and angle in pixels and radians."""
INKS: tuple[Colour, ...] = ((245, 245, 245), (20, 20, 20), (40, 40, 210), (40, 210, 230))
"""Pip colours (BGR): white, black, red, yellow."""
INK_NAMES = ("white", "black", "red", "yellow")
"""The names of INKS, in order."""
BODIES: dict[str, Colour] = {
    "white": (235, 235, 235),
    "grey": (130, 130, 130),
    "black": (30, 30, 30),
    "red": (40, 40, 200),
    "orange": (30, 120, 240),
    "yellow": (40, 215, 235),
    "green": (50, 170, 40),
    "cyan": (200, 190, 40),
    "blue": (190, 70, 30),
    "purple": (150, 40, 120),
    "pink": (170, 110, 240),
}
"""A body (BGR) for each colour a pin may name (vision.colours names each so), for trays of
one make (`TraySpec.dice_colour`) in tests and benchmarks."""


@dataclass(frozen=True)
class TraySpec:
    """What varies between synthetic trays, and how far."""

    size: tuple[int, int] = (640, 640)
    count: tuple[int, int] = (1, 25)
    side: tuple[float, float] = (0.035, 0.085)
    """Die side as a fraction of the longer image side."""
    lean: tuple[float, float] = (0.3, 1.2)
    """How much of its sides a die at the photo's edge shows, times its side (camera height)."""
    heaped: float = 0.4
    """Share of trays where the dice land in heaps, touching, as they often do."""
    side_pips: float = 0.8
    """Share of dice whose visible side faces show their pips, as real dice do."""
    kinds: tuple[str, ...] = ("d6",)
    """Die kinds thrown: "d6" (pips unless `numeral_d6`), d8, d10, d10-tens, d12, d20."""
    numeral_d6: float = 0.0
    """Share of d6 that carry numerals instead of pips."""
    floors: tuple[str, ...] = ("grey",)
    """Tray floors drawn from: grey, dark (black felt), felt (any colour), wood; and, drawn
    by no default, cloth (woven, creased) and printed (a play mat)."""
    look: NumeralLook | None = None
    """One make for every numeral die (a table's own set), instead of a random one each."""
    translucent: float = 0.3
    marbled: float = 0.25
    logo: float = 0.3
    blur: float = 0.8
    noise: float = 4.0
    dice_colour: tuple[Colour, Colour] | None = None
    """Body and pip colour (BGR) of every pip d6, instead of a random pair each (the random
    pair is still drawn, so the rest of the tray is the one the seed gives without this)."""
    neutral_bodies: float = 0.0
    """Share of pip d6 whose body is near-neutral (white, ivory, light grey, grey, black);
    at 0 no extra random number is drawn, so every tray is the one the seed gave before."""


EVERY_KIND = TraySpec(
    size=(640, 480),
    count=(1, 8),
    side=(0.04, 0.08),
    kinds=("d6", "d8", "d10", "d10-tens", "d12", "d20"),
    numeral_d6=0.5,
    floors=("grey", "dark", "felt", "wood"),
)
"""Trays of every kind on every floor, dice 40 to 80 px across: what benchmarks, tests and
the teach check read (training draws wider, see vision/training)."""


@dataclass(frozen=True)
class SynthDie:
    """The truth about one rendered die."""

    die: str
    value: int
    box: Box
    numerals: bool = False
    """A d6 with numerals rather than pips."""


@dataclass(frozen=True)
class SynthTray:
    """A rendered photo and the dice in it."""

    image: np.ndarray
    dice: tuple[SynthDie, ...]


def _floor(
    rng: np.random.Generator, w: int, h: int, floors: tuple[str, ...] = ("grey",)
) -> np.ndarray:
    """Return a tray floor lit unevenly, with a faint texture: grey unless `floors` says."""
    kind = floors[int(rng.integers(len(floors)))] if len(floors) > 1 else floors[0]
    if kind != "grey":
        return other_floor(rng, w, h, kind)
    base = (rng.uniform(150, 225) * rng.uniform(0.96, 1.04, 3)).astype(np.float32)
    angle = rng.uniform(0, 2 * np.pi)
    strength = rng.uniform(0, 0.25)
    xs = np.linspace(-0.5, 0.5, w, dtype=np.float32) * np.float32(np.cos(angle) * strength)
    ys = np.linspace(-0.5, 0.5, h, dtype=np.float32) * np.float32(np.sin(angle) * strength)
    light = 1.0 - (ys[:, None] + xs[None, :])
    fine = rng.standard_normal((h // 2 + 1, w // 2 + 1), dtype=np.float32) * 2.0
    grain = np.asarray(cv2.resize(fine, (w, h), interpolation=cv2.INTER_LINEAR), np.float32)
    floor = (light + grain * (1 / 200))[..., None] * base[None, None, :]
    return np.clip(floor, 0, 255).astype(np.float32)


def _square(centre: tuple[float, float], side: float, angle: float) -> np.ndarray:
    """Return the four corners of a rotated square."""
    c, s = np.cos(angle), np.sin(angle)
    half = side / 2
    corners = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    rot = np.array([[c, -s], [s, c]])
    return np.asarray(corners @ rot.T + np.array(centre), np.float32)


def _place(rng: np.random.Generator, spec: TraySpec, lean_k: float) -> list[Placed]:
    """Choose (x, y, side, angle) for each die so that no two overlap; they may touch."""
    w, h = spec.size
    count = int(rng.integers(spec.count[0], spec.count[1] + 1))
    base = rng.uniform(*spec.side) * max(w, h)
    placed: list[Placed] = []
    outlines: list[np.ndarray] = []
    heaps = _heaps(rng, spec, base)
    for _ in range(count * 40):
        if len(placed) == count:
            break
        side = base * rng.uniform(0.8, 1.25)
        if heaps is not None and rng.random() < 0.8:
            x, y = heaps[int(rng.integers(len(heaps)))] + rng.normal(0, 1.5 * base, 2)
            x, y = float(np.clip(x, side, w - side)), float(np.clip(y, side, h - side))
        else:
            x, y = rng.uniform(side, w - side), rng.uniform(side, h - side)
        die = (x, y, side, float(rng.uniform(0, np.pi / 2)))
        outline = _outline(die, spec.size, lean_k)
        if all(_apart(outline, other) for other in outlines):
            placed.append(die)
            outlines.append(outline)
    return placed


def _lean(x: float, y: float, side: float, size: tuple[int, int], lean_k: float) -> np.ndarray:
    """Return where a die's base lies from its top: towards the photo's centre (perspective)."""
    w, h = size
    return (np.array([w / 2 - x, h / 2 - y], np.float32) / max(w, h)) * side * lean_k


def _outline(die: Placed, size: tuple[int, int], lean_k: float) -> np.ndarray:
    """Return the convex outline a die covers in the photo: top face, sides and a little air."""
    x, y, side, angle = die
    top = _square((x, y), side * 1.08, angle)
    both = np.concatenate([top, top + _lean(x, y, side, size, lean_k)])
    return np.asarray(cv2.convexHull(both).reshape(-1, 2), np.float32)


def _heaps(rng: np.random.Generator, spec: TraySpec, base: float) -> np.ndarray | None:
    """Return centres of one to three heaps that dice pile towards, or None to scatter them."""
    if rng.random() >= spec.heaped:
        return None
    w, h = spec.size
    heaps = int(rng.integers(1, 4))
    return rng.uniform([2 * base, 2 * base], [w - 2 * base, h - 2 * base], (heaps, 2))


def _apart(a: np.ndarray, b: np.ndarray) -> bool:
    """Return whether two convex polygons do not overlap."""
    area, _ = cv2.intersectConvexConvex(a, b)
    return bool(area <= 1.0)


def _die_colour(rng: np.random.Generator, neutral: float = 0.0) -> tuple[Colour, Colour]:
    """Return a body colour, near-neutral for a `neutral` share, and a pip colour that stands
    out against it."""
    if neutral > 0 and rng.random() < neutral:
        return _inked(rng, _neutral_body(rng))
    body = tuple(int(v) for v in rng.integers(0, 256, 3))
    return _inked(rng, (body[0], body[1], body[2]))


def _inked(rng: np.random.Generator, body: Colour) -> tuple[Colour, Colour]:
    """Return the body and a pip ink at least 70 luma away from it."""
    luma = 0.114 * body[0] + 0.587 * body[1] + 0.299 * body[2]
    inks = [i for i in INKS if abs(0.114 * i[0] + 0.587 * i[1] + 0.299 * i[2] - luma) > 70]
    ink = inks[int(rng.integers(len(inks)))] if inks else INKS[1]
    return body, ink


NEUTRALS: tuple[tuple[float, float, Colour], ...] = (
    (225, 250, (0, 0, 0)),
    (205, 240, (-22, -6, 0)),
    (165, 210, (0, 0, 0)),
    (100, 160, (0, 0, 0)),
    (12, 55, (0, 0, 0)),
)
"""Near-neutral bodies: grey level range and BGR tint of white, ivory, light grey, grey, black."""


def _neutral_body(rng: np.random.Generator) -> Colour:
    """Return a white, ivory, light grey, grey or black body, a little off neutral."""
    lo, hi, tint = NEUTRALS[int(rng.integers(len(NEUTRALS)))]
    level = rng.uniform(lo, hi) + np.array(tint) + rng.uniform(-6, 6, 3)
    b, g, r = (int(v) for v in np.clip(np.round(level), 0, 255))
    return b, g, r


def _fill(layer: np.ndarray, poly: np.ndarray, colour: Colour | float) -> None:
    """Fill a polygon with anti-aliased, sub-pixel edges."""
    pts = np.round(poly * ONE).astype(np.int32)
    value = colour if isinstance(colour, tuple) else (colour,) * layer.shape[2]
    cv2.fillPoly(layer, [pts], value, cv2.LINE_AA, SHIFT)


def _roi(canvas: np.ndarray, x: float, y: float, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """Return a view of the canvas around a die and the offset of its corner."""
    h, w = canvas.shape[:2]
    x0, y0 = max(0, int(x - reach)), max(0, int(y - reach))
    x1, y1 = min(w, int(x + reach) + 1), min(h, int(y + reach) + 1)
    return canvas[y0:y1, x0:x1], np.array([x0, y0], np.float32)


def _body(
    rng: np.random.Generator, canvas: np.ndarray, die: Placed, spec: TraySpec, lean_k: float
) -> tuple[np.ndarray, Colour]:
    """Paint a die's shadow, sides and body onto the canvas; return its top face and pip colour."""
    x, y, side, angle = die
    h, w = canvas.shape[:2]
    top = _square((x, y), side, angle)
    # perspective: the top is nearer the lens, so the base lies towards the photo's centre
    # and a die away from the optical axis shows the sides that face the centre
    lean = _lean(x, y, side, (w, h), lean_k)
    view, corner = _roi(canvas, x, y, side * (1.2 + 0.5 * lean_k))
    local = top - corner
    shadow = np.zeros(view.shape[:2], np.float32)
    _fill(shadow[..., None], local + lean + side * 0.06, 0.45)
    view *= 1.0 - cv2.GaussianBlur(shadow, (0, 0), side * 0.08)[..., None]
    body, ink = _die_colour(rng, spec.neutral_bodies)
    if spec.dice_colour is not None:
        body, ink = spec.dice_colour
    paint = _paint_body(rng, view, np.array(body, np.float32), spec)
    mask = np.zeros((*view.shape[:2], 1), np.float32)
    _fill(mask, cv2.convexHull(np.concatenate([local, local + lean])).reshape(-1, 2), 1.0)
    view[:] = view * (1 - mask) + paint * rng.uniform(0.6, 0.9) * mask
    if rng.random() < spec.side_pips:
        for value, (a, b) in zip(rng.integers(1, 7, 4), _visible_edges(local, lean), strict=False):
            paint_side(view, a, b, lean, ink, int(value))
    face = np.zeros_like(mask)
    _fill(face, _square((x - corner[0], y - corner[1]), side * 0.94, angle), 1.0)
    view[:] = view * (1 - face) + paint * face
    return top, ink


def _visible_edges(top: np.ndarray, lean: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Return the top face's edges whose side face the camera sees: those facing the lean."""
    centre = top.mean(axis=0)
    edges = []
    for i in range(4):
        a, b = top[i], top[(i + 1) % 4]
        if float(np.dot((a + b) / 2 - centre, lean)) > 0:
            edges.append((a, b))
    return edges


def _paint_body(
    rng: np.random.Generator, canvas: np.ndarray, body: np.ndarray, spec: TraySpec
) -> np.ndarray:
    """Return what the die's plastic looks like everywhere: plain, marbled or see-through."""
    h, w = canvas.shape[:2]
    paint = np.broadcast_to(body, (h, w, 3)).astype(np.float32)
    if rng.random() < spec.marbled:
        swirl = cv2.resize(rng.random((8, 8)).astype(np.float32), (w, h))[..., None]
        other = rng.integers(0, 256, 3).astype(np.float32)
        paint = paint * swirl + other * (1 - swirl)
    if rng.random() < spec.translucent:
        return np.asarray(0.6 * paint + 0.4 * canvas * (body / 255.0), np.float32)
    return np.asarray(paint, np.float32)


def render_tray(
    seed: int,
    spec: TraySpec | None = None,
    floor_seed: int | None = None,
    dice: Sequence[str] = (),
    values: Sequence[int] = (),
    looks: Sequence[NumeralLook | None] = (),
) -> SynthTray:
    """Render one tray photo from a seed: same seed, same photo and labels.

    `floor_seed` draws the empty tray from its own seed, so a simulated camera can throw
    many different rolls into one and the same tray. `dice` names the kind of each die
    thrown, in order ("d6" is a pip d6), instead of drawing them from `spec.kinds`, and
    `values` what each shows (for a teaching set: every face once), and `looks` the make
    of each numeral die (a table's own dice; None: `spec.look`).
    """
    spec = spec or TraySpec()
    if dice:
        spec = replace(spec, count=(len(dice), len(dice)))
    rng = np.random.default_rng(seed)
    w, h = spec.size
    floor_rng = rng if floor_seed is None else np.random.default_rng(floor_seed)
    canvas = _floor(floor_rng, w, h, spec.floors)
    lean = rng.uniform(*spec.lean)
    truth: list[SynthDie] = []
    camera = Camera(w / 2, h / 2, max(w, h) / lean)
    for i, die in enumerate(_place(rng, spec, lean)):
        kind = dice[i] if dice else spec.kinds[int(rng.integers(len(spec.kinds)))]
        shows = values[i] if i < len(values) else None
        if kind != "d6" or (spec.numeral_d6 > 0 and rng.random() < spec.numeral_d6):
            look = looks[i] if i < len(looks) and looks[i] is not None else spec.look
            truth.append(_numeral_die(rng, canvas, die, kind, camera, look, shows))
            continue
        value = int(rng.integers(1, 7)) if shows is None else shows
        top, ink = _body(rng, canvas, die, spec, lean)
        style = FaceStyle((die[0], die[1]), die[2], die[3], ink, bool(rng.random() < spec.logo))
        FACE_PAINTERS[kind](canvas, style, value)
        _glare(rng, canvas, die)
        truth.append(SynthDie(kind, value, _label_box(top, die[2], w, h)))
    return SynthTray(_camera(rng, canvas, spec), tuple(truth))


def _numeral_die(
    rng: np.random.Generator,
    canvas: np.ndarray,
    die: Placed,
    kind: str,
    camera: Camera,
    look: NumeralLook | None,
    shows: int | None,
) -> SynthDie:
    """Paint a numeral die in 3D where a d6 of `die`'s side would lie; return its truth."""
    x, y, side, _ = die
    faces = face_values(kind)
    value = faces[int(rng.integers(len(faces)))] if shows is None else shows
    layout = look.layout if look else None
    pose = pose_die(rng, kind, value, (x, y), side * 1.55, camera, layout)
    _shadow(canvas, pose.project(pose.world), camera, side)
    outline = paint_die(canvas, pose, look or numeral_look(rng), throw_light(rng), rng)
    h, w = canvas.shape[:2]
    x0, y0 = outline.min(axis=0)
    x1, y1 = outline.max(axis=0)
    box = (
        max(0.0, float(x0) / w),
        max(0.0, float(y0) / h),
        min(1.0, float(x1) / w),
        min(1.0, float(y1) / h),
    )
    return SynthDie(kind, value, box, numerals=kind == "d6")


def _shadow(canvas: np.ndarray, outline: np.ndarray, camera: Camera, side: float) -> None:
    """Darken the floor under and beside a die, away from the light."""
    hull = cv2.convexHull(outline.astype(np.float32)).reshape(-1, 2) + side * 0.06
    view, corner = _roi(canvas, float(hull[:, 0].mean()), float(hull[:, 1].mean()), side * 1.6)
    shade = np.zeros(view.shape[:2], np.float32)
    _fill(shade[..., None], hull - corner, 0.45)
    view *= 1.0 - cv2.GaussianBlur(shade, (0, 0), side * 0.08)[..., None]


def _glare(rng: np.random.Generator, canvas: np.ndarray, die: Placed) -> None:
    """Add a soft specular highlight to some dice."""
    if rng.random() > 0.3:
        return
    x, y, side, _ = die
    view, corner = _roi(canvas, x, y, side)
    spot = np.zeros(view.shape[:2], np.float32)
    at = np.array([x, y]) + rng.uniform(-0.3, 0.3, 2) * side - corner
    cv2.circle(spot, (round(at[0]), round(at[1])), max(1, round(side * 0.12)), 1.0, -1)
    spot = cv2.GaussianBlur(spot, (0, 0), side * 0.06)[..., None] * rng.uniform(0.3, 0.7)
    view[:] = view * (1 - spot) + 255.0 * spot


def _label_box(top: np.ndarray, side: float, w: int, h: int) -> Box:
    """Return a normalised label box around the top face, padded a little like real labels."""
    pad = side * 0.1
    x0, y0 = top.min(axis=0) - pad
    x1, y1 = top.max(axis=0) + pad
    return (max(0.0, x0 / w), max(0.0, y0 / h), min(1.0, x1 / w), min(1.0, y1 / h))


def _camera(rng: np.random.Generator, canvas: np.ndarray, spec: TraySpec) -> np.ndarray:
    """Apply lens blur and sensor noise, then quantise to an 8-bit BGR photo."""
    sigma = rng.uniform(0, spec.blur)
    image = cv2.GaussianBlur(canvas, (0, 0), sigma) if sigma > 0.2 else canvas
    sigma_noise = np.float32(rng.uniform(0, spec.noise))
    noise = rng.standard_normal(image.shape, dtype=np.float32) * sigma_noise
    image = image + noise
    return np.clip(image, 0, 255).astype(np.uint8)
