"""How far dice stand above pixel noise, and what the reader makes of pure noise.

Usage: python bench/vision_noise.py [--seeds N] [--synth N] [--set NAME=VALUE ...]
(1) Pure-noise pictures (`vision.synth.noise`: every kind, 16x16 to 1920x1080, N seeds
each) read as `tidetower read` reads them (close-up on): how many read any die, and the
structure (`vision/structure.py`) of every candidate the finders raise in them: median,
99.9th percentile, largest. (2) The structure of every candidate on a labelled die: the
d6-tray photos (both splits), numerals-taught, and synthetic trays of every kind and of the
"towers not seen" noise domain (sensor noise sigma 12): smallest, 1st percentile, median.
`min_structure` was set from (1) alone; (2) only shows how far the dice are from it.
(3) What the measure costs: the median time, on one thread, to measure every candidate of
a d6-tray test photo, and the median time to read one (`Reading.ms`, the measure included).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import cv2
import numpy as np
from vision_d6 import overrides

from tidetower.vision.d6.find import find_dice
from tidetower.vision.progress import progress
from tidetower.vision.read import as_bgr, load_image, read_dice, to_work_size
from tidetower.vision.score import Label, load_labels, matches
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.structure import Detail, structure
from tidetower.vision.synth import EVERY_KIND, NOISE_KINDS, noise_picture, render_tray

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
SIZES = ((16, 16), (48, 64), (64, 64), (200, 300), (480, 640), (972, 1296), (1080, 1920))
NOISE_SEED = 3_000_000
SYNTH_SEED = 5_600_000
"""Renders for this benchmark: no net learned from these seeds, and no setting was set on them."""


def measured(
    picture: np.ndarray, settings: ReaderSettings
) -> list[tuple[float, tuple[float, ...]]]:
    """Return each finder candidate's structure and its box (normalised), as read_dice sees it."""
    bgr = as_bgr(picture)
    if bgr is None:
        return []
    work = to_work_size(bgr, settings.work_size)
    detail, (h, w) = Detail.of(bgr, work), work.shape[:2]
    return [(structure(detail, c), c.box(w, h)) for c in find_dice(work, settings)]


def noise(seeds: int, settings: ReaderSettings) -> None:
    """Read noise pictures and print how many read a die and their candidates' structure."""
    read_any, values = 0, []
    cases = [(k, s, NOISE_SEED + i) for k in NOISE_KINDS for s in SIZES for i in range(seeds)]
    with progress(cases, "reading noise") as bar:
        for kind, size, seed in bar:
            picture = noise_picture(kind, size, seed)
            reading = read_dice(picture, settings=dataclasses.replace(settings, close_up=True))
            read_any += bool(reading.dice or reading.unreadable)
            values += [s for s, _ in measured(picture, settings)]
    v = np.array(values)
    print(
        f"noise: {len(cases)} pictures ({len(NOISE_KINDS)} kinds x {len(SIZES)} sizes x "
        f"{seeds} seeds), {read_any} read a die; {len(v)} finder candidates, structure "
        f"median {np.median(v):.2f}, 99.9th percentile {np.percentile(v, 99.9):.2f}, "
        f"largest {v.max():.2f}"
    )


def on_dice(name: str, items: Iterable[tuple[np.ndarray, tuple[Label, ...]]]) -> None:
    """Print the structure of the candidates that lie on a labelled die."""
    values = []
    with progress(items, f"measuring {name}") as bar:
        for picture, labels in bar:
            found = measured(picture, ReaderSettings())
            values += [s for s, box in found if any(matches(box, lb.box) for lb in labels)]
    v = np.array(values)
    print(
        f"{name}: {len(v)} candidates on dice, structure smallest {v.min():.1f}, "
        f"1st percentile {np.percentile(v, 1):.1f}, median {np.median(v):.0f}"
    )


def photos(folder: str) -> Iterator[tuple[np.ndarray, tuple[Label, ...]]]:
    """Yield a labelled set's photos with their labels."""
    for item in load_labels(DATA / folder):
        yield load_image(item.path), item.dice


def rendered(
    count: int, sensor_noise: float | None
) -> Iterator[tuple[np.ndarray, tuple[Label, ...]]]:
    """Yield synthetic trays of every kind (sensor noise as given, else the default)."""
    spec = (
        EVERY_KIND if sensor_noise is None else dataclasses.replace(EVERY_KIND, noise=sensor_noise)
    )
    for seed in range(SYNTH_SEED, SYNTH_SEED + count):
        tray = render_tray(seed, spec)
        yield tray.image, tuple(Label(d.value, d.box, d.die) for d in tray.dice)


def cost() -> None:
    """Print the median time to measure a test photo's candidates, and to read the photo."""
    settings, measure, reading = ReaderSettings(), [], []
    items = [i for i in load_labels(DATA / "d6-tray") if i.split == "test"]
    read_dice(load_image(items[0].path))  # load the nets before timing
    for item in items:
        bgr = load_image(item.path)
        work = to_work_size(bgr, settings.work_size)
        found = find_dice(work, settings)
        start = time.perf_counter()
        detail = Detail.of(bgr, work)
        for c in found:
            structure(detail, c)
        measure.append((time.perf_counter() - start) * 1000)
        reading.append(read_dice(bgr, settings=settings).ms)
    print(
        f"cost, d6-tray test split ({len(items)} photos, one thread): measuring the "
        f"candidates {statistics.median(measure):.2f} ms a photo (median), reading the "
        f"photo {statistics.median(reading):.1f} ms"
    )


def main() -> None:
    """Parse the options and print both measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="noise pictures per kind and size")
    parser.add_argument("--synth", type=int, default=100, help="synthetic trays per set")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    noise(args.seeds, overrides(args.set))
    for folder in ("d6-tray", "numerals-taught"):
        if (DATA / folder / "labels.json").exists():
            on_dice(folder, photos(folder))
    on_dice(f"synthetic, every kind ({args.synth})", rendered(args.synth, None))
    on_dice(f"synthetic, every kind, sensor noise 12 ({args.synth})", rendered(args.synth, 12.0))
    if (DATA / "d6-tray" / "labels.json").exists():
        cost()


if __name__ == "__main__":
    main()
