"""Pictures of pure noise, every pixel drawn on its own: what the reader must find no die in."""

from __future__ import annotations

import numpy as np

NOISE_KINDS = ("uniform", "uniform grey", "gaussian", "salt and pepper", "impulses")
"""Uniform colour or grey levels; Gaussian about a random grey; every pixel black or white;
black and white impulses (2 to 20 % of the pixels) on a flat grey."""


def noise_picture(kind: str, size: tuple[int, int], seed: int) -> np.ndarray:
    """Return a BGR (grey for "uniform grey") picture of one kind of noise, `size` (h, w)."""
    rng = np.random.default_rng(seed)
    h, w = size
    if kind == "uniform":
        return rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    if kind == "uniform grey":
        return rng.integers(0, 256, (h, w), dtype=np.uint8)
    if kind == "gaussian":
        pixels = rng.normal(rng.uniform(60, 200), rng.uniform(10, 60), (h, w, 3))
        return np.clip(pixels, 0, 255).astype(np.uint8)
    if kind == "salt and pepper":
        return np.where(rng.random((h, w, 1)) < 0.5, 0, 255).astype(np.uint8).repeat(3, axis=2)
    if kind != "impulses":
        raise ValueError(f"{kind!r} is not a kind of noise: one of {', '.join(NOISE_KINDS)}")
    picture = np.full((h, w, 3), int(rng.integers(40, 220)), np.uint8)
    hit, density = rng.random((h, w)), rng.uniform(0.02, 0.2)
    picture[hit < density / 2], picture[hit > 1 - density / 2] = 0, 255
    return picture
