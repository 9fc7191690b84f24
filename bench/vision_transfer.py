"""Measure the shipped d6 reader on towers it has not seen: new floors, lights, cameras, dice.

Usage: python bench/vision_transfer.py [--trays N] [--only GROUP ...] [--no-real]
       [--teach N] [--teach-domain NAME ...] [--teach-read M] [--models DIR]
       [--set NAME=VALUE ...]

Out of the box, per domain: each domain pushes one factor of the default synthetic tray
(`TraySpec()`) to a setting the reader was not built on and leaves the rest at defaults:
the floor, the light, the camera (blur, sharpening, noise, JPEG, white balance, a camera
slanted up to 30 degrees, dice 25 or 200 px across) or the dice's body and pip colours
(every colour a pin may name, vision/colours.py, with each of the renderer's pip INKS). Light,
camera and slant are done to the rendered photo here (slant: a perspective warp of the photo
and of its label boxes, fitted back into the frame); floors, sizes and colours are rendered.
A row per domain, then the hardest domains. `--trays N` trays per domain (default 40).

Calibration: every die read is binned by confidence, and each bin's share of right reads is
printed with the expected calibration error (ECE), for the synthetic trays pooled, the
default trays alone, and the real d6-tray dev and test photos (skipped without ../shared).
A read is right when score()'s one-to-one match gives it a label of its value; matched to
another value, or to no label (a false positive), it is wrong (score.read_outcomes).

`--teach N` teaches a profile from N labelled photos of a domain (each `--teach-domain`
named, by default the hardest measured, not counting pairs of colours the renderer never
makes), then reads `--teach-read` other photos of it (100) with and without the profile.

Seeds: tray k of every domain is seed 7_000_000 + k, so the domains that change the photo
after rendering show the default trays, paired; teaching photos are seeds 7_050_000 + k and
the photos read after teaching 7_060_000 + k. No training used these: the d6 nets learned
from seeds 10_000 on (1200 by default), the numeral net from 100_000 on (10_000 for its 20
chunks); other benchmarks and tests read 1M, 2M, 3M, 5.1M, 6.1M, 6.2M and 7.1M on.

Colour domains lie on the default grey floor, so white and grey bodies also stand out
little from the floor. Pairs whose body and pips differ by 70 luma or less are marked
"(alike)": the renderer never draws them (white on white shows no pips at all).
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from transfer_domains import Domain, domains, photo
from vision_d6 import overrides, use_models

from tidetower.vision.d6 import nets
from tidetower.vision.numerals.teach import TeachError, teach
from tidetower.vision.progress import progress
from tidetower.vision.read import load_image, read_dice
from tidetower.vision.score import (
    DEV_FOLDS,
    Label,
    Tally,
    load_labels,
    read_outcomes,
    score,
)
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import render_tray

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "d6-tray"
SEED = 7_000_000
TEACH_SEED = 7_050_000
TEACH_READ_SEED = 7_060_000
BINS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)
"""Confidence bin edges; the last bin holds 1.0 itself."""
Outcome = tuple[float, bool]
"""A die read's confidence, and whether it was right."""


@dataclass
class Result:
    """What reading one domain gave: its tally and every read's outcome."""

    domain: Domain
    tally: Tally = field(default_factory=Tally)
    outcomes: list[Outcome] = field(default_factory=list)


def read_all(
    photos: Iterable[tuple[np.ndarray, tuple[Label, ...]]], settings: ReaderSettings
) -> tuple[Tally, list[Outcome]]:
    """Read each photo; return the tally and every die read's confidence and rightness."""
    tally, outcomes = Tally(), []
    for image, labels in photos:
        reading = read_dice(image, settings=settings)
        scored = score(reading, labels)
        tally.add(scored, reading.ms)
        judged = [(d.confidence, right) for d, right in read_outcomes(reading, labels)]
        if sum(right for _, right in judged) != scored.right:
            raise AssertionError("read_outcomes disagrees with score()")
        outcomes += judged
    return tally, outcomes


def measure(domain: Domain, trays: int, settings: ReaderSettings) -> Result:
    """Read a domain's trays and return its result."""
    photos = (photo(domain, seed) for seed in range(SEED, SEED + trays))
    with progress(photos, f"{domain.group} {domain.name}", length=trays) as bar:
        tally, outcomes = read_all(bar, settings)
    return Result(domain, tally, outcomes)


HEADER = (
    "| domain | photos | dice | right | wrong | unreadable | missed "
    "| false pos. /100 photos | photos all right |\n|---|---|---|---|---|---|---|---|---|"
)


def row(name: str, t: Tally) -> str:
    """Return one Markdown row: every labelled die is right, wrong, unreadable or missed."""
    d, n = max(t.dice, 1), max(t.images, 1)
    shares = (t.right, t.wrong, t.unreadable, t.missed)
    cells = " | ".join(f"{100 * v / d:.1f} %" for v in shares)
    return (
        f"| {name} | {t.images} | {t.dice} | {cells} | {100 * t.false_positives / n:.1f} "
        f"| {100 * t.all_right / n:.1f} % |"
    )


def label(r: Result) -> str:
    """Return a domain's row name; a pair the renderer never makes is marked."""
    return f"{r.domain.group}: {r.domain.name}" + (" (alike)" if r.domain.alike else "")


def pct(part: int, whole: int) -> float:
    """Return part as a percentage of whole (0 when whole is 0)."""
    return 100 * part / max(whole, 1)


def hardest(results: Sequence[Result], count: int = 8) -> None:
    """Print the domains with the fewest dice right, and those with the most read wrong."""
    fair = [r for r in results if not r.domain.alike]
    print(f"\nHardest domains, fewest dice right (of {len(fair)}; alike pairs left out):")
    for r in sorted(fair, key=lambda r: r.tally.right / max(r.tally.dice, 1))[:count]:
        t = r.tally
        print(
            f"- {label(r)}: {pct(t.right, t.dice):.1f} % right, {pct(t.wrong, t.dice):.1f} % "
            f"wrong, {pct(t.unreadable, t.dice):.1f} % unreadable, {pct(t.missed, t.dice):.1f} "
            f"% missed, {pct(t.false_positives, t.images):.1f} false pos. /100 photos"
        )
    print("Most dice read wrong (a wrong read is worse than an unreadable one):")
    for r in sorted(fair, key=lambda r: -r.tally.wrong / max(r.tally.dice, 1))[:count]:
        print(f"- {label(r)}: {pct(r.tally.wrong, r.tally.dice):.1f} % wrong")
    alike_pairs([r for r in results if r.domain.alike])


def alike_pairs(alike: Sequence[Result]) -> None:
    """Print the pairs of body and pips the renderer never makes, pooled, and the worst."""
    if not alike:
        return
    alike = sorted(alike, key=lambda r: r.tally.right / max(r.tally.dice, 1))
    t = pooled(alike)
    worst = ", ".join(
        f"{r.domain.name} {pct(r.tally.right, r.tally.dice):.1f} %" for r in alike[:4]
    )
    print(
        f"Alike pairs ({len(alike)}: body and pips within 70 luma, which the renderer never "
        f"pairs) pooled: {pct(t.right, t.dice):.1f} % right, {pct(t.wrong, t.dice):.1f} % "
        f"wrong; fewest right: {worst}"
    )


def pooled(results: Sequence[Result]) -> Tally:
    """Return the tally of several results together."""
    total = Tally()
    for r in results:
        total.absorb(r.tally)
    return total


def reliability(outcomes: Sequence[Outcome], name: str) -> None:
    """Print a reliability table of reads binned by confidence, and the ECE."""
    print(f"\nReliability: {name} ({len(outcomes)} die reads)")
    print("| confidence | reads | mean confidence | right | gap |\n|---|---|---|---|---|")
    conf = np.array([c for c, _ in outcomes], np.float64)
    right = np.array([r for _, r in outcomes], np.float64)
    ece = 0.0
    for lo, hi in itertools.pairwise(BINS):
        inside = (conf >= lo) & ((conf < hi) | (hi == BINS[-1]))
        n = int(inside.sum())
        if n == 0:
            print(f"| {lo:.2f}-{hi:.2f} | 0 | - | - | - |")
            continue
        mean, share = float(conf[inside].mean()), float(right[inside].mean())
        ece += n / len(conf) * abs(share - mean)
        print(
            f"| {lo:.2f}-{hi:.2f} | {n} | {mean:.3f} | {100 * share:.1f} % | {share - mean:+.3f} |"
        )
    print(f"Expected calibration error: {ece:.4f}" if len(conf) else "No reads.")


def real_photos(split: str) -> list[tuple[np.ndarray, tuple[Label, ...]]]:
    """Return the real d6-tray photos of one split with their (fixed) labels."""
    return [(load_image(i.path), i.dice) for i in load_labels(DATA) if i.split == split]


def seen_folds() -> set[str] | None:
    """Return the real-photo folds the shipped nets learned from (None: a net does not say)."""
    said = [nets.learned_from(p) for p in [nets.MODELS / "d6_finder.onnx", *nets.face_models()]]
    return None if None in said else set().union(*[s for s in said if s is not None])


def real_part(settings: ReaderSettings) -> None:
    """Print the real photos' rows and reliability tables, or why there are none."""
    if not DATA.exists():
        print(f"\nReal photos skipped: {DATA.resolve()} does not exist.")
        return
    results = {split: read_all(real_photos(split), settings) for split in ("dev", "test")}
    seen = seen_folds()
    print(f"\nReal d6-tray photos (the shipped nets learned from folds {seen})\n{HEADER}")
    for split, (tally, _) in results.items():
        folds = {"test"} if split == "test" else set(DEV_FOLDS)
        held = seen is not None and not folds & seen
        print(row(f"d6-tray {split} ({'held out' if held else 'NOT held out'})", tally))
    for split, (_, outcomes) in results.items():
        reliability(outcomes, f"real d6-tray {split} split")


def write_photos(domain: Domain, seeds: range, folder: Path) -> tuple[list[Path], dict[str, Any]]:
    """Write a domain's photos as PNG and return their paths and a teach labels file's data."""
    paths: list[Path] = []
    raw: dict[str, Any] = {}
    for seed in seeds:
        image, labels = photo(domain, seed)
        path = folder / f"tray_{seed}.png"
        cv2.imwrite(str(path), image)
        dice = [{"die": x.die, "value": x.value, "box": [float(v) for v in x.box]} for x in labels]
        paths.append(path)
        raw[path.name] = {"dice": dice}
    return paths, raw


def teach_part(domain: Domain, count: int, reads: int, settings: ReaderSettings) -> None:
    """Teach a profile from `count` photos of a domain, then read `reads` others without
    and with it, and print both rows."""
    print(f"\nTeaching: {count} photos of {domain.group}: {domain.name}, then {reads} others")
    with tempfile.TemporaryDirectory(prefix="tidetower-transfer-") as tmp:
        folder, profile = Path(tmp), Path(tmp) / "profile"
        paths, raw = write_photos(domain, range(TEACH_SEED, TEACH_SEED + count), folder)
        (folder / "labels.json").write_text(json.dumps(raw))
        try:
            done = teach(profile, folder / "labels.json", paths, {}, settings)
        except TeachError as error:
            print(f"Teaching refused: {error}")
            return
        taught = sum(done.added.values())
        print(
            f"Taught {taught} views; check trays right {100 * done.before:.1f} % without, "
            f"{100 * done.after:.1f} % with\n{HEADER}"
        )
        seeds = range(TEACH_READ_SEED, TEACH_READ_SEED + reads)
        for name, use in (("without profile", None), ("with taught profile", str(profile))):
            photos = (photo(domain, seed) for seed in seeds)
            tally, _ = read_all(photos, replace(settings, profile=use))
            print(row(f"{domain.name}, {name}", tally))


def parse() -> argparse.Namespace:
    """Return the command line's options."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trays", type=int, default=40, help="trays per domain")
    groups = ["defaults", "floor", "light", "camera", "size", "colour"]
    parser.add_argument("--only", action="append", choices=groups, help="groups to read")
    parser.add_argument("--no-real", action="store_true", help="skip the real photos")
    parser.add_argument("--teach", type=int, default=0, metavar="N", help="teach from N photos")
    parser.add_argument(
        "--teach-domain", action="append", help="a domain's name, e.g. cold (default: hardest)"
    )
    parser.add_argument("--teach-read", type=int, default=100, help="photos read after")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument(
        "--models", type=Path, default=None, help="read with the .onnx files found in DIR"
    )
    return parser.parse_args()


def synthetic_part(args: argparse.Namespace, settings: ReaderSettings) -> list[Result]:
    """Read every chosen domain, printing its row as it is done; return the results."""
    chosen = [d for d in domains() if args.only is None or d.group in args.only]
    print(f"Out of the box: {args.trays} trays per domain, seeds {SEED}..{SEED + args.trays - 1}")
    print(HEADER)
    results = []
    for domain in chosen:
        results.append(measure(domain, args.trays, settings))
        print(row(label(results[-1]), results[-1].tally), flush=True)
    return results


def pick(results: Sequence[Result], names: list[str] | None) -> list[Domain]:
    """Return the domains to teach: those named, else the hardest fair one measured."""
    if names:
        known = {d.name: d for d in domains()}
        if unknown := [n for n in names if n not in known]:
            raise SystemExit(f"--teach-domain {unknown}: no such domain; see the rows' names")
        return [known[n] for n in names]
    fair = [r for r in results if not r.domain.alike] or list(results)
    return [min(fair, key=lambda r: r.tally.right / max(r.tally.dice, 1)).domain]


def main() -> None:
    """Run the benchmark and print its tables."""
    args = parse()
    start = time.perf_counter()
    cv2.setNumThreads(1)
    if args.models:
        use_models(args.models)
    settings = overrides(args.set)
    read_dice(render_tray(0).image, settings=settings)  # load the nets before timing
    results = synthetic_part(args, settings)
    hardest(results)
    reliability([o for r in results for o in r.outcomes], "synthetic trays, every domain pooled")
    defaults = [o for r in results if r.domain.group == "defaults" for o in r.outcomes]
    if defaults:
        reliability(defaults, "synthetic default trays alone")
    if not args.no_real:
        real_part(settings)
    for domain in pick(results, args.teach_domain) if args.teach else []:
        teach_part(domain, args.teach, args.teach_read, settings)
    print(f"\nRun time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
