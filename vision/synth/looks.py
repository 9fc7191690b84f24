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
    """Return a float BGR tray floor: dark felt, coloured felt or wood, lit unevenly."""
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
