"""Benchmark the d6 reader on the real d6-tray photos (dev and test splits) and synthetic trays.

Usage: python bench/vision_d6.py [--synth N] [--only dev|test|synth|devval|rune55] [--fold F]
       [--models DIR] [--cv FOLD=DIR ...] [--set NAME=VALUE ...] [--breakdown]
Scoring is issue #4's: centre inside the label box or IoU >= 0.3, one to one, by confidence.
`--only devval --fold F` scores one fold of the photos (a is dev-val); with `--models DIR`
the .onnx files found in DIR replace the shipped ones, and `--set` overrides reader
settings: together they compare variants on a fold without touching the others.
`--cv test=vision/d6 --cv b=DIR2 ...` reads each fold with nets held out of it
(`python -m tidetower.vision.training.d6 --holdout test --holdout b --out DIR2`) and pools
the folds: the recipe's score on unseen photos, cross-validated. A row whose photos the nets
learned from (their `trained_on` metadata) says so; `--cv` refuses such a pair.
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from collections.abc import Iterable
from pathlib import Path

import cv2

from tidetower.vision.d6 import nets
from tidetower.vision.progress import progress
from tidetower.vision.read import load_image, read_dice
from tidetower.vision.score import (
    FOLDS,
    HEADER,
    Label,
    Tally,
    fold_of,
    load_labels,
    rune55_fold,
    score,
)
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import render_tray

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "d6-tray"
SYNTH_SEED = 1_000_000
"""Benchmark trays use seeds from here on, apart from those the nets were trained on."""


def run(items: Iterable[tuple[object, tuple[Label, ...]]], settings: ReaderSettings) -> Tally:
    """Read each image, score it against its labels and tally the outcome (a bar on a
    terminal's stderr meanwhile)."""
    tally = Tally()
    with progress(items, "reading") as bar:
        for image, labels in bar:
            photo = load_image(image) if isinstance(image, Path) else image
            reading = read_dice(photo, settings=settings)  # type: ignore[arg-type]
            tally.add(score(reading, labels), reading.ms)
    return tally


def real(split: str, fold: str = "a") -> Iterable[tuple[object, tuple[Label, ...]]]:
    """Yield the real photos of one split (test, dev, or devval: one fold) with labels."""
    for item in load_labels(DATA):
        if (fold_of(item.path.name) == fold) if split == "devval" else item.split == split:
            yield item.path, item.dice


RUNE55 = DATA.parent / "d6-rune55"


def rune55(split: str = "test") -> Iterable[tuple[object, tuple[Label, ...]]]:
    """Yield d6-rune55's photos of its maker's split (another camera, tray and dice)."""
    for item in load_labels(RUNE55):
        if rune55_fold(item.path) == f"rune55-{split}":
            yield item.path, item.dice


def folds_in(split: str, fold: str) -> set[str]:
    """Return the folds whose photos a scored set holds."""
    folds = {"test": {"test"}, "dev": set(FOLDS) - {"test"}, "devval": {fold}}
    return {**folds, "rune55": {"rune55-test"}}.get(split, set())


def trained_on() -> set[str] | None:
    """Return the folds of real photos the nets in use learned from (None: a net does not say)."""
    said = [nets.learned_from(p) for p in [nets.MODELS / "d6_finder.onnx", *nets.face_models()]]
    return None if None in said else set().union(*said)


def caveat(folds: set[str]) -> str:
    """Return what a row's label must add when its photos may not be held out."""
    seen = trained_on()
    if seen is None:
        return " (nets do not say what they learned from)" if folds else ""
    return " (**nets learned from these photos: not held out**)" if folds & seen else ""


def synthetic(count: int) -> Iterable[tuple[object, tuple[Label, ...]]]:
    """Yield seeded synthetic trays with their labels."""
    for seed in range(SYNTH_SEED, SYNTH_SEED + count):
        tray = render_tray(seed)
        yield tray.image, tuple(Label(d.value, d.box) for d in tray.dice)


def use_models(folder: Path) -> None:
    """Read with the .onnx files found in a folder instead of the shipped ones (dev-val runs)."""
    mixed = Path(tempfile.mkdtemp(prefix="d6-models-"))
    faces = sorted(folder.glob("d6_faces*.onnx")) or nets.face_models()
    finder = folder / "d6_finder.onnx"
    for model in [*faces, finder if finder.exists() else nets.MODELS / finder.name]:
        (mixed / model.name).symlink_to(model.resolve())
    nets.MODELS = mixed


def overrides(pairs: list[str]) -> ReaderSettings:
    """Return reader settings with NAME=VALUE overrides, typed like the defaults."""
    settings = ReaderSettings()
    for pair in pairs:
        name, _, value = pair.partition("=")
        kind = type(getattr(settings, name))
        if getattr(settings, name) is None:
            kind = str  # a file (kind_net, numeral_net, profile)
        typed = value.lower() in ("1", "true", "yes") if kind is bool else kind(value)
        settings = dataclasses.replace(settings, **{name: typed})
    return settings


def cross_validate(pairs: list[str], settings: ReaderSettings, breakdown: bool) -> None:
    """Read each FOLD=DIR pair's fold with DIR's nets, refusing nets that learned from it,
    and print a row per fold and the pooled row."""
    pooled = Tally()
    for pair in pairs:
        fold, _, folder = pair.partition("=")
        if fold not in FOLDS:
            raise SystemExit(f"--cv {pair}: no fold {fold!r}; folds are {', '.join(FOLDS)}")
        use_models(Path(folder))
        seen = trained_on()
        if seen is None or fold in seen:
            raise SystemExit(
                f"--cv {pair}: the nets in {folder} do not say they were held "
                f"out of fold {fold} (trained_on: {seen})"
            )
        read_dice(render_tray(0).image, settings=settings)  # load the nets before timing
        tally = run(real("devval", fold), settings)
        report(tally, f"fold {fold}, nets held out of it ({folder})", breakdown)
        pooled.absorb(tally)
    report(pooled, "all folds above, each read by nets held out of it", breakdown)


def report(tally: Tally, label: str, breakdown: bool) -> None:
    """Print a set's row, and its raw counts if asked."""
    print(tally.row(label), flush=True)
    if breakdown:
        print(f"  {tally.counts()}", flush=True)


def main() -> None:
    """Run the benchmark and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--synth", type=int, default=500)
    parser.add_argument(
        "--only", choices=["dev", "test", "synth", "devval", "rune55"], default=None
    )
    parser.add_argument("--models", type=Path, default=None)
    parser.add_argument(
        "--cv",
        action="append",
        default=[],
        metavar="FOLD=DIR",
        help="read FOLD with the nets in DIR, held out of it; pool the folds",
    )
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--breakdown", action="store_true", help="print raw counts per set")
    parser.add_argument(
        "--fold",
        choices=sorted(FOLDS),
        default="a",
        help="which fold `--only devval` scores (a is dev-val)",
    )
    args = parser.parse_args()
    cv2.setNumThreads(1)
    if args.models:
        use_models(args.models)
    settings = overrides(args.set)
    print(HEADER)
    if args.cv:  # loads each fold's nets itself
        cross_validate(args.cv, settings, args.breakdown)
        return
    read_dice(render_tray(0).image, settings=settings)  # load the nets before timing
    for name in ("test", "dev", "synth", "devval", "rune55"):
        if args.only == name or (args.only is None and name != "devval"):
            items = {"synth": synthetic(args.synth), "rune55": rune55()}.get(
                name, real(name, args.fold)
            )
            label = {
                "synth": f"synthetic ({args.synth})",
                "devval": f"d6-tray fold {args.fold}",
                "rune55": "d6-rune55 test split (another camera and tray)",
            }.get(name, f"d6-tray {name} split")
            report(run(items, settings), label + caveat(folds_in(name, args.fold)), args.breakdown)


if __name__ == "__main__":
    main()
