"""Taught dice: right / wrong / unanswered per die, taught from k photos a face.

Each die is a rendered look with one numbering (`NumeralLook.layout`), so every throw shows
the same neighbours around a face, as a physical die does. It is taught from `k` throws a
face and read on other throws of the same die (new seeds: new spot, spin, light, floor and
camera lean). The face stage is scored on the die's true box (the finder is scored by the
other benchmarks), through the same `which.told` the reader calls. Nothing here is tuned:
the lead each die needs comes from its own taught photos.

    python bench/taught_dice.py [--looks 6] [--test 5] [--k 1,3,5] [--kinds d20,d12,...]
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace

import numpy as np

from tidetower.engine.tray import Box, DieRead, Unreadable
from tidetower.vision.dice.teach import seen_in, taught_dice
from tidetower.vision.dice.which import known, told
from tidetower.vision.kinds import face_values
from tidetower.vision.synth import TraySpec, render_tray
from tidetower.vision.synth.looks import numeral_look
from tidetower.vision.synth.numerals import NumeralLook

SIZE = (1296, 972)
"""numerals-taught's camera: a real tower's die is about 110 px across at this size."""
FLOORS = ("grey", "dark", "felt", "wood")
LEAN = (0.45, 0.65)
"""How much of its sides a die at the picture's edge shows, in sides: the tower's camera
(`tidetower enclosure geometry`: lens 176.5 mm over the floor, 176 mm of floor across)
sees a 12-20 mm die at the edge lean by about half its side. The renderer's default
(0.3-1.2) is a wider lens than any tower has."""


def throws(
    look: NumeralLook,
    kind: str,
    seed: int,
    per_face: int,
    size: tuple[int, int] = SIZE,
    side: tuple[float, float] = TraySpec.side,
) -> list[tuple[int, tuple[np.ndarray, Box]]]:
    """Return `per_face` rendered throws of each face of one die: (face, (frame, box))."""
    spec = TraySpec(
        size=size,
        side=side,
        blur=0.0,
        noise=2.0,
        look=look,
        floors=FLOORS,
        lean=LEAN,
        numeral_d6=1.0,
    )
    out = []
    for face in face_values(kind):
        for i in range(per_face):
            tray = render_tray(seed + face * 1009 + i, spec, dice=[kind], values=[face])
            out.append((face, (tray.image, tray.dice[0].box)))
    return out


Throw = tuple[int, tuple[np.ndarray, Box]]


def one_die(
    taught: list[Throw], tests: list[Throw], kind: str, k: int
) -> tuple[list[str], list[float]]:
    """Teach one die from its first k throws a face; return each test throw's outcome and
    read time."""
    per_face: dict[int, int] = {}
    kept = []
    for face, (frame, box) in taught:
        per_face[face] = per_face.get(face, 0) + 1
        if per_face[face] <= k:
            kept.append(seen_in(frame, box, kind, face))
    die = known(taught_dice(kept, {kind: "die"})[0])
    said, times = [], []
    for face, (frame, box) in tests:
        start = time.perf_counter()
        verdict = told(frame, Unreadable(box, "found"), (die,))
        times.append((time.perf_counter() - start) * 1000)
        if isinstance(verdict, DieRead):
            said.append("right" if verdict.value == face else "wrong")
        else:
            said.append("unanswered")
    return said, times


def main() -> None:
    """Print right / wrong / unanswered per kind and k, and the median read time."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--looks", type=int, default=6)
    parser.add_argument("--test", type=int, default=5)
    parser.add_argument("--k", default="1,3,5")
    parser.add_argument("--kinds", default="d20,d12,d10,d8,d6")
    parser.add_argument("--size", default="1296x972", help="the camera's picture, WxH")
    parser.add_argument("--side", default="0.035,0.085", help="die side / picture, low,high")
    args = parser.parse_args()
    rng = np.random.default_rng(36)
    looks = [replace(numeral_look(rng), layout=i + 1) for i in range(args.looks)]
    width, height = (int(v) for v in args.size.split("x"))
    ks = [int(v) for v in args.k.split(",")]
    low, high = (float(v) for v in args.side.split(","))
    print(
        f"camera {width}x{height}, side {low}-{high}, {args.looks} dice a kind, "
        f"{args.test} test throws a face"
    )
    print("kind  k  dice  right %  wrong %  unanswered %  median ms")
    for kind in args.kinds.split(","):
        said: dict[int, list[str]] = {k: [] for k in ks}
        times: dict[int, list[float]] = {k: [] for k in ks}
        for i, look in enumerate(looks):
            size = (width, height)
            taught = throws(look, kind, 1000 * i + 7, max(ks), size, (low, high))
            tests = throws(look, kind, 1000 * i + 500_007, args.test, size, (low, high))
            for k in ks:
                s, t = one_die(taught, tests, kind, k)
                said[k], times[k] = said[k] + s, times[k] + t
        for k in ks:
            n = len(said[k])
            share = {w: 100 * said[k].count(w) / n for w in ("right", "wrong", "unanswered")}
            print(
                f"{kind:4} {k:2} {n:5}  {share['right']:6.1f}  {share['wrong']:6.2f}"
                f"  {share['unanswered']:11.1f}  {statistics.median(times[k]):8.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
