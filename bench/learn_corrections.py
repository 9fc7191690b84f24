"""Time `tidetower teach --from-corrections`: learning from N corrections of a table's own dice.

Usage: python bench/learn_corrections.py [--corrections 200] [--dice 3]
Renders N trays of a table's own green d20 among pip d6 (seeds 6,400,000 on), keeps each as
a correction the GM entered, then learns from them as the tower does (four in five taught,
one in five set aside to check, the new profile checked on 40 synthetic trays before it is
written) and prints the time and the before/after figures. One onnxruntime thread.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import cv2

from tidetower.engine.tray import DieRead, Reading
from tidetower.firmware.corrections import Corrections
from tidetower.firmware.learn import learn_from_corrections
from tidetower.vision.progress import progress
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import TraySpec, render_tray
from tidetower.vision.synth.numerals import NumeralLook

SEED = 6_400_000
LOOK = NumeralLook(body=(60, 150, 40), ink=(20, 20, 20), font=cv2.FONT_HERSHEY_TRIPLEX)
SPEC = TraySpec(size=(640, 480), side=(0.05, 0.07), floors=("dark", "felt"), look=LOOK)


def keep(folder: Path, count: int, dice: int) -> Corrections:
    """Keep `count` rendered throws as corrections, every die entered by the GM."""
    corrections = Corrections(folder, keep=count)
    kinds = ("d20", *("d6",) * (dice - 1))
    with progress(range(SEED, SEED + count), f"rendering {count} corrections") as seeds:
        for seed in seeds:
            tray = render_tray(seed, SPEC, dice=kinds)
            final = Reading(tuple(DieRead(d.die, d.value, d.box, 1.0) for d in tray.dice))
            corrections.keep_correction(f"r-{seed}", tray.image, Reading(), final)
    return corrections


def main() -> None:
    """Keep the corrections, learn from them, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corrections", type=int, default=200)
    parser.add_argument("--dice", type=int, default=3)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    with tempfile.TemporaryDirectory() as tmp:
        corrections = keep(Path(tmp) / "corrections", args.corrections, args.dice)
        start = time.perf_counter()
        done = learn_from_corrections(
            corrections, Path(tmp) / "dice", ReaderSettings(), along=progress
        )
        seconds = time.perf_counter() - start
    print(
        f"{args.corrections} corrections of {args.dice} dice: learned in {seconds:.1f} s "
        f"(taught {done.taught}, checked {done.checked}); set-aside dice right "
        f"{100 * done.before:.1f} % before, {100 * done.after:.1f} % after; "
        f"{'adopted' if done.adopted else 'not adopted'}"
    )


if __name__ == "__main__":
    main()
