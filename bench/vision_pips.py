"""Measure what the pip counter (the second opinion, vision/d6/pips.py) adds to the d6 reader.

Usage: python bench/vision_pips.py [--only test|dev|synth] [--synth N]
Each photo is read twice, the pip count off and on. Printed per set: the reader's rows both
ways, the wrong reads the count removed and the right reads it cost, and how often the count
spoke (dice it agreed on, dice it disagreed on). The counter's constants were set on renders
(seeds 9,000,000 on); the real photos here never tuned it.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import cv2

from tidetower.engine.tray import Reading
from tidetower.vision.progress import progress
from tidetower.vision.read import load_image, read_dice
from tidetower.vision.score import HEADER, Label, Tally, load_labels, score
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import TraySpec, render_tray

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "d6-tray"
SYNTH_SEED = 8_000_000
"""Renders for this benchmark: neither the nets nor the counter learned from these seeds."""
VARIED = TraySpec(size=(640, 480), count=(1, 10), floors=("grey", "dark", "felt", "wood"))

Item = tuple[object, tuple[Label, ...]]


def real(split: str) -> Iterable[Item]:
    """Yield the real photos of one split with their labels (fixes applied)."""
    for item in load_labels(DATA):
        if item.split == split:
            yield item.path, item.dice


def synthetic(count: int) -> Iterable[Item]:
    """Yield rendered trays on every floor with their labels."""
    for seed in range(SYNTH_SEED, SYNTH_SEED + count):
        tray = render_tray(seed, VARIED)
        yield tray.image, tuple(Label(d.value, d.box) for d in tray.dice)


def opinions(reading: Reading) -> tuple[int, int]:
    """Return (dice the count agreed on, dice it disagreed on) in a reading."""
    agreed = sum(bool(d.check) for d in reading.dice)
    disagreed = sum(u.reason.startswith("two opinions") for u in reading.unreadable)
    return agreed, disagreed


def compare(items: Iterable[Item], name: str) -> None:
    """Read every item with the count off and on and print what changed."""
    off, on = Tally(), Tally()
    agreed = disagreed = 0
    without = ReaderSettings(pip_count=False)
    with progress(items, f"reading {name}") as bar:
        for image, labels in bar:
            photo = load_image(image) if isinstance(image, Path) else image
            first = read_dice(photo, settings=without)  # type: ignore[arg-type]
            second = read_dice(photo, settings=replace(without, pip_count=True))  # type: ignore[arg-type]
            off.add(score(first, labels), first.ms)
            on.add(score(second, labels), second.ms)
            a, d = opinions(second)
            agreed, disagreed = agreed + a, disagreed + d
    print(off.row(f"{name}, pip count off"))
    print(on.row(f"{name}, pip count on"))
    print(
        f"  {name}: wrong reads removed {off.wrong - on.wrong} (of {off.wrong}), right reads "
        f"lost {off.right - on.right} (of {off.right}); the count agreed on {agreed} dice "
        f"read ({100 * agreed / max(on.right + on.wrong, 1):.0f} %), disagreed on {disagreed}",
        flush=True,
    )


def main() -> None:
    """Run the comparison on the chosen sets."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=["test", "dev", "synth"], default=None)
    parser.add_argument("--synth", type=int, default=200)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    read_dice(render_tray(0).image)  # load the nets before timing
    print(HEADER)
    for name in ("test", "dev", "synth"):
        if args.only not in (None, name):
            continue
        if name == "synth":
            compare(synthetic(args.synth), f"renders, 4 floors ({args.synth})")
        elif DATA.exists():
            compare(real(name), f"d6-tray {name} split")
        else:
            print(f"  d6-tray {name} split: skipped, {DATA} does not exist")


if __name__ == "__main__":
    main()
