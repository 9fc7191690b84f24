"""The unseen towers of bench/vision_transfer.py: each domain a tray spec and what the
camera does to the rendered photo (light, blur, shake, noise, JPEG, white balance, slant)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from tidetower.vision.colours import COLOURS
from tidetower.vision.score import Label
from tidetower.vision.synth import TraySpec, render_tray
from tidetower.vision.synth.render import BODIES, INK_NAMES, INKS

Colour = tuple[int, int, int]
Post = Callable[[np.ndarray, np.random.Generator], np.ndarray]


@dataclass(frozen=True)
class Domain:
    """One unseen setting: a group, a name, the trays' spec and what the camera does after."""

    group: str
    name: str
    spec: TraySpec = field(default_factory=TraySpec)
    post: Post | None = None
    slant: float = 0.0
    """Degrees the camera is turned from looking straight down."""
    alike: bool = False
    """Body and pips too alike in brightness for the renderer ever to pair them."""


def tinted(gains: tuple[float, float, float]) -> Post:
    """Return a post step scaling the B, G and R channels: a light's or white balance's cast."""
    scale = np.array(gains, np.float32)
    return lambda image, rng: to_u8(image * scale)


def to_u8(image: np.ndarray) -> np.ndarray:
    """Return a float image clipped and rounded to 8 bits."""
    return np.clip(np.round(image), 0, 255).astype(np.uint8)


def dim(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return the photo under a third of the light, with the sensor's read noise on top."""
    noise = rng.normal(0, 2.0, image.shape)
    return to_u8(image * 0.3 + noise)


def uneven(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return the photo lit from one side, falling to a third, and vignetted."""
    h, w = image.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    u, v = xs / w - 0.5, ys / h - 0.5
    turn = rng.uniform(0, 2 * np.pi)
    side = 0.7 + 0.8 * (u * np.cos(turn) + v * np.sin(turn))
    light = np.clip(side, 0.3, 1.2) * (1 - 0.8 * (u * u + v * v))
    return to_u8(image * light[..., None])


def hard_shadows(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return the photo with sharp-edged shadows: the tower wall's over a part, and a bar's."""
    h, w = image.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    shade = np.ones((h, w), np.float32)
    for width in (None, rng.uniform(0.05, 0.15) * w):
        turn, at = rng.uniform(0, 2 * np.pi), rng.uniform(0.25, 0.75, 2) * (w, h)
        across = (xs - at[0]) * np.cos(turn) + (ys - at[1]) * np.sin(turn)
        inside = across > 0 if width is None else np.abs(across) < width / 2
        shade[inside] *= rng.uniform(0.35, 0.55)
    return to_u8(image * cv2.GaussianBlur(shade, (0, 0), 1.0)[..., None])


def blurred(sigma: float) -> Post:
    """Return a post step for a lens out of focus: a Gaussian blur of sigma pixels."""
    return lambda image, rng: np.asarray(cv2.GaussianBlur(image, (0, 0), sigma))


def shaken(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return the photo smeared by camera shake: a 9 px line at any angle."""
    kernel = np.zeros((9, 9), np.float32)
    turn = rng.uniform(0, 180)
    cv2.line(kernel, (0, 4), (8, 4), 1.0, 1)
    rot = cv2.getRotationMatrix2D((4, 4), turn, 1.0)
    kernel = np.asarray(cv2.warpAffine(kernel, rot, (9, 9)), np.float32)
    return np.asarray(cv2.filter2D(image, -1, kernel / kernel.sum()))


def sharpened(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return the photo over-sharpened, as phone cameras do: an unsharp mask of 1.5."""
    soft = cv2.GaussianBlur(image.astype(np.float32), (0, 0), 1.5)
    return to_u8(image * 2.5 - soft * 1.5)


def noisy(sigma: float) -> Post:
    """Return a post step adding sensor noise of sigma grey levels to every channel."""
    return lambda image, rng: to_u8(image + rng.normal(0, sigma, image.shape))


def jpeg(quality: int) -> Post:
    """Return a post step saving the photo as a JPEG of this quality and loading it back."""

    def step(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        _, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        return np.asarray(cv2.imdecode(data, cv2.IMREAD_COLOR))

    return step


def slant_view(shape: tuple[int, ...], degrees: float, rng: np.random.Generator) -> np.ndarray:
    """Return the homography of a camera turned this far about a random axis in the photo's
    plane (focal length the photo's longer side), scaled and moved to fit the frame."""
    h, w = shape[:2]
    f = float(max(w, h))
    k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    turn = rng.uniform(0, 2 * np.pi)
    axis = np.array([np.cos(turn), np.sin(turn), 0.0]) * np.radians(degrees)
    view = k @ cv2.Rodrigues(axis)[0] @ np.linalg.inv(k)
    corners = cv2.perspectiveTransform(
        np.array([[[0, 0], [w, 0], [w, h], [0, h]]], np.float64), view
    )[0]
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    s = min(w / (hi[0] - lo[0]), h / (hi[1] - lo[1]))
    shift = (np.array([w, h]) - s * (hi - lo)) / 2 - s * lo
    fit = np.array([[s, 0, shift[0]], [0, s, shift[1]], [0, 0, 1]])
    return np.asarray(fit @ view)


def slanted(
    image: np.ndarray, labels: tuple[Label, ...], degrees: float, rng: np.random.Generator
) -> tuple[np.ndarray, tuple[Label, ...]]:
    """Return the photo as a slanted camera sees it, the rim filled with the floor's colour,
    and the labels with each box's warped corners' bounding box."""
    h, w = image.shape[:2]
    view = slant_view(image.shape, degrees, rng)
    rim = np.median(np.concatenate([image[0], image[-1], image[:, 0], image[:, -1]]), axis=0)
    out = cv2.warpPerspective(
        image, view, (w, h), flags=cv2.INTER_LINEAR, borderValue=tuple(float(v) for v in rim)
    )
    moved = []
    for label in labels:
        x0, y0, x1, y1 = label.box
        box = np.array([[[x0 * w, y0 * h], [x1 * w, y0 * h], [x1 * w, y1 * h], [x0 * w, y1 * h]]])
        pts = cv2.perspectiveTransform(box, view)[0] / (w, h)
        lo, hi = np.clip(pts.min(axis=0), 0, 1), np.clip(pts.max(axis=0), 0, 1)
        moved.append(replace(label, box=(float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))))
    return np.asarray(out), tuple(moved)


def luma(c: Colour) -> float:
    """Return a BGR colour's brightness, as the renderer weighs it when it pairs pips."""
    return 0.114 * c[0] + 0.587 * c[1] + 0.299 * c[2]


def colour_domains() -> list[Domain]:
    """Return a domain per body colour and pip ink: plain (not marbled) dice of that pair."""
    out = []
    for body in COLOURS:
        colour = BODIES[body]
        for ink_name, ink in zip(INK_NAMES, INKS, strict=True):
            spec = TraySpec(dice_colour=(colour, ink), marbled=0.0)
            alike = abs(luma(colour) - luma(ink)) <= 70
            out.append(Domain("colour", f"{body} body, {ink_name} pips", spec, alike=alike))
    return out


def domains() -> list[Domain]:
    """Return every domain: the defaults, then one factor pushed at a time."""
    floors = {"dark": "dark felt", "felt": "coloured felt", "wood": "wood"}
    floors |= {"cloth": "woven cloth", "printed": "printed mat"}
    return [
        Domain("defaults", "default trays (grey floor)"),
        *(Domain("floor", name, TraySpec(floors=(kind,))) for kind, name in floors.items()),
        Domain("light", "warm", post=tinted((0.7, 0.92, 1.15))),
        Domain("light", "cold", post=tinted((1.18, 1.0, 0.75))),
        Domain("light", "dim (x0.3)", post=dim),
        Domain("light", "uneven", post=uneven),
        Domain("light", "hard shadows", post=hard_shadows),
        Domain("camera", "blur sigma 2 px", post=blurred(2.0)),
        Domain("camera", "camera shake 9 px", post=shaken),
        Domain("camera", "over-sharpened", post=sharpened),
        Domain("camera", "noise sigma 12", post=noisy(12.0)),
        Domain("camera", "noise sigma 25", post=noisy(25.0)),
        Domain("camera", "JPEG quality 40", post=jpeg(40)),
        Domain("camera", "JPEG quality 20", post=jpeg(20)),
        Domain("camera", "white balance green", post=tinted((0.85, 1.15, 0.85))),
        Domain("camera", "white balance magenta", post=tinted((1.12, 0.85, 1.12))),
        Domain("camera", "slant 15 deg", slant=15.0),
        Domain("camera", "slant 30 deg", slant=30.0),
        Domain("size", "dice ~25 px", TraySpec(side=(25 / 640, 25 / 640))),
        Domain("size", "dice ~200 px", TraySpec(side=(200 / 640,) * 2, count=(1, 4), heaped=0.0)),
        *colour_domains(),
    ]


def photo(domain: Domain, seed: int) -> tuple[np.ndarray, tuple[Label, ...]]:
    """Render one tray of a domain and return the photo the camera takes, with its labels."""
    tray = render_tray(seed, domain.spec)
    labels = tuple(Label(d.value, d.box, d.die) for d in tray.dice)
    rng = np.random.default_rng([seed, 14])
    image = tray.image if domain.post is None else domain.post(tray.image, rng)
    if domain.slant:
        image, labels = slanted(image, labels, domain.slant, rng)
    return image, labels
