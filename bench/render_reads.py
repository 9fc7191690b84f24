"""How well the shipped reader reads the renderer's numeral dice, beside real dice's figures.

Usage: python bench/render_reads.py [--trays N] [--size WxH] [--text-scale F ...]
One rendered numeral die a tray, N trays per kind (d8, d10, d12, d20), read as the tower
reads a settled frame; prints right, wrong and unreadable per kind. `--text-scale` renders
the numerals smaller or larger than the renderer's own, to see whether the renderer's
numerals are what the reader misses.
"""

from __future__ import annotations

import argparse
from collections import Counter

from tidetower.vision.read import read_dice
from tidetower.vision.synth import TraySpec, numerals, render_tray

KINDS = ("d8", "d10", "d12", "d20")
SEED = 5000
"""Renders for this benchmark: no net learned from these seeds, no setting was set on them."""


def outcome(kind: str, seed: int, size: tuple[int, int]) -> str:
    """Render one die of `kind` in a tray and say whether it read right, wrong or not at all."""
    tray = render_tray(seed, TraySpec(size=size, count=(1, 1), blur=0.0, noise=0.0), dice=[kind])
    read = [d.value for d in read_dice(tray.image).dice]
    if not read:
        return "unreadable"
    return "right" if read == [tray.dice[0].value] else "wrong"


def measure(trays: int, size: tuple[int, int]) -> dict[str, Counter[str]]:
    """Return each kind's counts of right, wrong and unreadable over `trays` renders."""
    return {k: Counter(outcome(k, SEED + s, size) for s in range(trays)) for k in KINDS}


def main() -> None:
    """Print the figures for each text scale asked for."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trays", type=int, default=15)
    ap.add_argument("--size", default="640x480")
    ap.add_argument("--text-scale", type=float, action="append", default=[])
    args = ap.parse_args()
    w, h = (int(v) for v in args.size.split("x"))
    base = dict(numerals.TEXT_SIZE)
    for scale in args.text_scale or [1.0]:
        numerals.TEXT_SIZE.update({k: v * scale for k, v in base.items()})
        counts = measure(args.trays, (w, h))
        total = sum(counts.values(), Counter())
        print(
            f"{w}x{h} text x{scale}: {total['right']} right, {total['wrong']} wrong, "
            f"{total['unreadable']} unreadable of {total.total()}"
        )
        for kind, c in counts.items():
            print(f"  {kind}: {c['right']} right, {c['wrong']} wrong, {c['unreadable']} unreadable")


if __name__ == "__main__":
    main()
