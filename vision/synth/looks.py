"""Random looks for synthetic photos: dice plastics and inks, lights, and tray floors."""

from __future__ import annotations

import cv2
import numpy as np

from tidetower.vision.synth.numerals import FONTS, Light, NumeralLook

Colour = tuple[int, int, int]
INKS: tuple[Colour, ...] = (
    (245, 245, 245),
    (25, 25, 25),
    (60, 200, 235),
    (40, 40, 200),
    (200, 200, 200),
    (80, 170, 220),
)
"""Numeral inks (BGR): white, black, gold, red, silver, orange."""


def _luma(c: Colour | np.ndarray) -> float:
    """Return the perceived brightness of a BGR colour."""
    return 0.114 * float(c[0]) + 0.587 * float(c[1]) + 0.299 * float(c[2])


def _plastic(rng: np.random.Generator) -> Colour:
    """Return a dice plastic colour: mostly bright and saturated, else pastel, dark or white."""
    hue = int(rng.integers(0, 180))
    sat = int(
        rng.choice([rng.integers(170, 256)] * 3 + [rng.integers(40, 170), rng.integers(0, 40)])
    )
    val = int(rng.integers(150, 256)) if rng.random() < 0.75 else int(rng.integers(30, 150))
    hsv = np.array([[[hue, sat, val]]], np.uint8)
    b, g, r = (int(v) for v in cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0])
    return b, g, r


def numeral_look(rng: np.random.Generator) -> NumeralLook:
    """Return a random die make: plastic, an ink that stands out on it, font, stroke, marker."""
    body = _plastic(rng)
    inks = [i for i in INKS if abs(_luma(i) - _luma(body)) > 70] or [INKS[0], INKS[1]]
    ink = inks[int(rng.integers(len(inks)))]
    second = _plastic(rng) if rng.random() < 0.2 else None
    return NumeralLook(
        body=body,
        ink=ink,
        font=FONTS[int(rng.integers(len(FONTS)))],
        stroke=float(rng.uniform(0.08, 0.2)),
        marker="underline" if rng.random() < 0.6 else "dot",
        shine=float(rng.uniform(0.2, 0.7)) if rng.random() < 0.4 else 0.0,
        second=second,
        glow=float(rng.uniform(1.2, 2.0)) if rng.random() < 0.35 else 1.0,
    )


def throw_light(rng: np.random.Generator) -> Light:
    """Return a light from somewhere above, flat or raking."""
    tilt = rng.uniform(0, 0.9)
    turn = rng.uniform(0, 2 * np.pi)
    towards = np.array([np.cos(turn) * tilt, np.sin(turn) * tilt, 1.0])
    return Light(towards / np.linalg.norm(towards), float(rng.uniform(0.45, 0.9)))


def other_floor(rng: np.random.Generator, w: int, h: int, kind: str) -> np.ndarray:
    """Return a float BGR tray floor: dark felt, coloured felt or wood (or one of PATTERNED),
    lit unevenly."""
    if kind in PATTERNED:
        return patterned_floor(rng, w, h, kind)
    if kind == "dark":
        base = rng.uniform(5, 45) * rng.uniform(0.8, 1.2, 3)
    elif kind == "felt":
        base = np.array(_plastic(rng), np.float64) * rng.uniform(0.4, 0.9)
    else:
        base = np.array([40, 90, 150], np.float64) * rng.uniform(0.6, 1.3)
    light = _uneven(rng, w, h)
    grain = rng.standard_normal((h // 3 + 1, w // 3 + 1)).astype(np.float32)
    if kind == "wood":
        streaks = np.asarray(cv2.resize(grain, (grain.shape[1], 1)), np.float32)
        grain = streaks.repeat(grain.shape[0], axis=0) * 4
    texture = np.asarray(cv2.resize(grain, (w, h), interpolation=cv2.INTER_LINEAR), np.float32)
    floor = light[..., None] * base[None, None, :].astype(np.float32)
    floor = floor + texture[..., None] * np.float32(rng.uniform(2, 8))
    return np.asarray(np.clip(floor, 0, 255), np.float32)


def _uneven(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """Return a light falloff over the floor: a gradient and a soft bright patch."""
    xs = np.linspace(-0.5, 0.5, w, dtype=np.float32)
    ys = np.linspace(-0.5, 0.5, h, dtype=np.float32)
    turn, strength = rng.uniform(0, 2 * np.pi), rng.uniform(0, 0.5)
    light = 1.0 - (ys[:, None] * np.sin(turn) + xs[None, :] * np.cos(turn)) * strength
    return np.asarray(light, np.float32)


PATTERNED = ("cloth", "printed")
"""Floors no default spec draws: woven cloth with folds, and a printed play mat."""


def patterned_floor(rng: np.random.Generator, w: int, h: int, kind: str) -> np.ndarray:
    """Return a float BGR floor of woven, creased cloth or a printed mat, lit unevenly."""
    if kind == "cloth":
        base = np.array(_plastic(rng), np.float32) * np.float32(rng.uniform(0.4, 0.85))
        floor = base[None, None, :] * _folds(rng, w, h)[..., None]
        floor = floor + _weave(rng, w, h)[..., None] * np.float32(rng.uniform(8, 20))
    else:
        floor = _printed(rng, w, h)
    floor = floor * _uneven(rng, w, h)[..., None]
    return np.asarray(np.clip(floor, 0, 255), np.float32)


def _weave(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """Return a plain weave's shading, -0.5..0.5: threads a few pixels wide, at any angle."""
    period, turn = rng.uniform(3, 7), rng.uniform(0, np.pi)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    u = (xs * np.cos(turn) + ys * np.sin(turn)) / period
    v = (ys * np.cos(turn) - xs * np.sin(turn)) / period
    over = (np.floor(u) + np.floor(v)) % 2 == 0
    thread = np.where(over, np.sin(np.pi * (u % 1)), np.sin(np.pi * (v % 1)))
    return np.asarray(thread - 0.5, np.float32)


def _folds(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """Return the soft light and dark of a cloth's folds, about 0.75..1.15."""
    coarse = rng.uniform(-1, 1, (4, 4)).astype(np.float32)
    folds = np.asarray(cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC), np.float32)
    return np.asarray(0.95 + 0.2 * np.clip(folds, -1, 1), np.float32)


def _printed(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """Return a printed play mat: a pale ground, a square or hex grid, and scattered marks."""
    ground = np.array(_plastic(rng), np.float32) * 0.3 + np.float32(rng.uniform(120, 170))
    mat = np.ascontiguousarray(np.broadcast_to(ground, (h, w, 3)), np.float32)
    ink = tuple(float(v) for v in rng.uniform(10, 90, 3))
    cell = float(rng.uniform(30, 80))
    for line in _grid(rng, w, h, cell):
        cv2.polylines(mat, [line], False, ink, int(rng.integers(1, 3)), cv2.LINE_AA)
    for _ in range(int(rng.integers(10, 40))):
        colour = tuple(float(v) for v in rng.uniform(0, 255, 3))
        at = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        cv2.circle(mat, at, int(rng.integers(2, 25)), colour, -1, cv2.LINE_AA)
    return mat


def _grid(rng: np.random.Generator, w: int, h: int, cell: float) -> list[np.ndarray]:
    """Return a grid's lines as point lists: squares, or the zigzags of a hex grid."""
    lines: list[np.ndarray] = []
    if rng.random() < 0.5:
        lines += [np.array([[0, y], [w, y]]) for y in np.arange(0, h, cell)]
        lines += [np.array([[x, 0], [x, h]]) for x in np.arange(0, w, cell)]
        return [np.round(line).astype(np.int32) for line in lines]
    xs = np.arange(-cell, w + cell, cell * 0.866)
    for k, y in enumerate(np.arange(-cell, h + cell, cell * 1.5)):
        low = np.arange(len(xs)) % 2 == k % 2
        ys = y + np.where(low, cell / 2, 0.0)
        lines.append(np.stack([xs, ys], axis=1))
        lines += [np.array([[x, v], [x, v + cell]]) for x, v in zip(xs[low], ys[low], strict=True)]
    return [np.round(line).astype(np.int32) for line in lines]
