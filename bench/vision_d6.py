"""Benchmark the d6 reader on the real d6-tray photos (dev and test splits) and synthetic trays.

Usage: python bench/vision_d6.py [--synth N] [--only dev|test|synth]
Scoring is issue #4's: centre inside the label box or IoU >= 0.3, one to one, by confidence.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import cv2

from tidetower.vision.read import load_image, read_dice
from tidetower.vision.score import ImageScore, Label, load_labels, score
from tidetower.vision.synth import render_tray

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "d6-tray"
SYNTH_SEED = 1_000_000
"""Benchmark trays use seeds from here on, apart from those the nets were trained on."""


@dataclass
class Tally:
    """Running totals over a set of images."""

    images: int = 0
    dice: int = 0
    right: int = 0
    unreadable: int = 0
    false_positives: int = 0
    spurious_unreadable: int = 0
    all_right: int = 0
    ms: list[float] = field(default_factory=list)

    def add(self, s: ImageScore, ms: float) -> None:
        """Count one scored image."""
        self.images += 1
        self.dice += s.labelled
        self.right += s.right
        self.unreadable += s.unreadable_on_die
        self.false_positives += s.false_positives
        self.spurious_unreadable += s.spurious_unreadable
        self.all_right += s.all_right
        self.ms.append(ms)

    def row(self, name: str) -> str:
        """Return one Markdown table row."""
        d, n = max(self.dice, 1), max(self.images, 1)
        return (
            f"| {name} | {self.images} | {self.dice} | {100 * self.right / d:.1f} % "
            f"| {100 * self.all_right / n:.1f} % | {100 * self.unreadable / d:.1f} % "
            f"| {100 * self.false_positives / n:.1f} | {100 * self.spurious_unreadable / n:.1f} "
            f"| {statistics.median(self.ms) if self.ms else 0:.1f} |"
        )


HEADER = (
    "| set | images | dice | per-die right | images all right | unreadable "
    "| false pos. /100 img | stray unreadable /100 img | median ms |\n"
    "|---|---|---|---|---|---|---|---|---|"
)


def run(items: Iterable[tuple[object, tuple[Label, ...]]]) -> Tally:
    """Read each image, score it against its labels and tally the outcome."""
    tally = Tally()
    for image, labels in items:
        reading = read_dice(load_image(image) if isinstance(image, Path) else image)  # type: ignore[arg-type]
        tally.add(score(reading, labels), reading.ms)
    return tally


def real(split: str) -> Iterable[tuple[object, tuple[Label, ...]]]:
    """Yield the real photos of one split with their labels."""
    for item in load_labels(DATA):
        if item.split == split:
            yield item.path, item.dice


def synthetic(count: int) -> Iterable[tuple[object, tuple[Label, ...]]]:
    """Yield seeded synthetic trays with their labels."""
    for seed in range(SYNTH_SEED, SYNTH_SEED + count):
        tray = render_tray(seed)
        yield tray.image, tuple(Label(d.value, d.box) for d in tray.dice)


def main() -> None:
    """Run the benchmark and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--synth", type=int, default=500)
    parser.add_argument("--only", choices=["dev", "test", "synth"], default=None)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    read_dice(render_tray(0).image)  # load the nets before timing
    print(HEADER)
    for name in ("test", "dev", "synth"):
        if args.only in (None, name):
            items = synthetic(args.synth) if name == "synth" else real(name)
            label = f"d6-tray {name} split" if name != "synth" else f"synthetic ({args.synth})"
            print(run(items).row(label), flush=True)


if __name__ == "__main__":
    main()
