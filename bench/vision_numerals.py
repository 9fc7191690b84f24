"""Benchmark the reader on numeral dice: real untaught dice, synthetic trays, speed, teach.

Usage: python bench/vision_numerals.py [--only values|real|synth|speed|teach|teach-real]
       [--kind-net FOLD=FILE ...] [--step N] [--synth N] [--model FILE ...] [--breakdown]
`values`: dice-values (4,747 photos of many makers' dice) and numerals-taught read with
each fold's kind net held out of it (`numeral_sets`: by filming for dice-values, top, color,
angle and wood, and numerals-taught as a source of its own).
Scoring is the d6 benchmark's (centre inside the label box or IoU >= 0.3, one to one), and a
die is right only when both its kind and its value are. `real`: the photos of
../shared/data/numerals-taught read with the calibration a tower would take of that tray
(its empty-tray photo). The net's `trained_on` says which kinds' photos it learned from;
only the others count as untaught. With several --model (nets trained with --leave-out),
each reads the kinds it never saw and the tallies add up: untaught, cross-validated.
`synth`: trays of every kind from seeds no net trained on. `speed`: median
reading time of 640x480 trays on one thread, with and without a profile. `teach`: a
synthetic die set taught from one render per face, then read in new throws.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import cv2
import numpy as np
from numeral_sets import FOLDS, TABLE_HEADER, dice_values, numerals_taught, read_all, table

from tidetower.engine.tray import Reading
from tidetower.vision.calibrate import find_tray
from tidetower.vision.d6.nets import load_session
from tidetower.vision.kinds import face_values
from tidetower.vision.numerals.nets import MODEL, NUMERAL_KINDS
from tidetower.vision.numerals.teach import teach
from tidetower.vision.progress import progress
from tidetower.vision.read import load_image, read_dice
from tidetower.vision.score import HEADER, Label, Tally, is_right, load_labels, match, score
from tidetower.vision.settings import Calibration, ReaderSettings
from tidetower.vision.synth import EVERY_KIND, TraySpec, render_tray
from tidetower.vision.synth.numerals import NumeralLook

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "numerals-taught"
SYNTH_SEED = 2_000_000
"""Benchmark trays use seeds from here on, apart from every training seed."""
BENCH_SPEC = EVERY_KIND

Item = tuple[np.ndarray, tuple[Label, ...]]


def real_photos() -> tuple[Calibration, list[Item]]:
    """Return the tray's calibration and the labelled photos of numerals-taught."""
    background = load_image(DATA / "images" / "background_empty_tray.jpg")
    calibration = Calibration(background, find_tray(background))
    items = [
        (load_image(i.path), i.dice)
        for i in load_labels(DATA)
        if i.path.name != "background_empty_tray.jpg"
    ]
    return calibration, items


def seen_kinds(model: Path) -> frozenset[str]:
    """Return the kinds whose numerals-taught photos a numeral net learned from."""
    said = load_session(model).get_modelmeta().custom_metadata_map.get("trained_on", "")
    for part in said.split(","):
        if part.startswith("numerals-taught:"):
            return (
                frozenset(NUMERAL_KINDS) - frozenset(part.split("all but ")[-1].split("+"))
                if "all but" in part
                else frozenset(NUMERAL_KINDS)
            )
    return frozenset()


def untaught(
    models: list[Path], calibration: Calibration, items: list[Item]
) -> tuple[Tally, Counter[str]]:
    """Read each photo with the first net that never saw its kind; add up the tallies."""
    tally, kinds = Tally(), Counter[str]()
    seen = [seen_kinds(model) for model in models]
    for n, model in enumerate(models):
        mine = [(i, ls) for i, ls in items if ls and reader_of(ls, seen) == n]
        t, k = run(mine, ReaderSettings(numeral_net=str(model)), calibration)
        tally.absorb(t)
        kinds.update(k)
    return tally, kinds


def reader_of(labels: tuple[Label, ...], seen: list[frozenset[str]]) -> int | None:
    """Return the index of the first net that saw none of these dice's kinds."""
    return next(
        (n for n, known in enumerate(seen) if all(x.die not in known for x in labels)), None
    )


def synthetic(count: int, spec: TraySpec = BENCH_SPEC) -> list[Item]:
    """Return seeded synthetic trays of every kind with their labels."""
    out = []
    with progress(range(SYNTH_SEED, SYNTH_SEED + count), f"rendering {count} trays") as seeds:
        for seed in seeds:
            tray = render_tray(seed, spec)
            out.append((tray.image, tuple(Label(d.value, d.box, d.die) for d in tray.dice)))
    return out


def run(
    items: Iterable[Item], settings: ReaderSettings, calibration: Calibration | None = None
) -> tuple[Tally, Counter[str]]:
    """Read and score each photo; return the tally and a count of outcomes per kind."""
    tally, kinds = Tally(), Counter[str]()
    with progress(items, "reading") as bar:
        for image, labels in bar:
            reading = read_dice(image, calibration, settings)
            tally.add(score(reading, labels), reading.ms)
            for label, outcome in outcomes(reading, labels):
                kinds[f"{label.die} {outcome}"] += 1
    return tally, kinds


def outcomes(reading: Reading, labels: tuple[Label, ...]) -> list[tuple[Label, str]]:
    """Return what became of each labelled die: right, wrong, unreadable or missed."""
    m = match(reading, labels)
    out = [
        (label, "right" if is_right(die, label) else f"wrong ({die.die} {die.value})")
        for die, label in m.dice
        if label is not None
    ]
    out += [(label, "unreadable") for _, label in m.unreadable if label is not None]
    return out + [(label, "missed") for label in m.missed]


def report(name: str, tally: Tally, kinds: Counter[str], breakdown: bool) -> None:
    """Print a set's row, the share of kinds right and wrong reads, and per kind if asked."""
    d = max(tally.dice, 1)
    print(tally.row(name))
    print(
        f"  kind right {100 * tally.kind_right / d:.1f} % of dice, wrong value "
        f"{100 * tally.wrong / d:.1f} %, missed {100 * tally.missed / d:.1f} %; "
        f"{tally.counts()}"
    )
    if breakdown:
        for key in sorted(kinds):
            print(f"    {key}: {kinds[key]}")


def speed(settings: ReaderSettings, count: int = 60) -> float:
    """Return the median ms to read a 640x480 tray of every kind, one thread."""
    times = []
    for image, _ in synthetic(count):
        times.append(read_dice(image, settings=settings).ms)
    return statistics.median(times)


TABLE_SETS = {
    "d20": NumeralLook((60, 150, 40), (20, 20, 20), cv2.FONT_HERSHEY_TRIPLEX, 0.14, "dot"),
    "d12": NumeralLook((200, 200, 205), (40, 40, 180), cv2.FONT_HERSHEY_PLAIN, 0.12),
    "d10": NumeralLook((30, 30, 30), (60, 200, 235), cv2.FONT_HERSHEY_COMPLEX, 0.1),
    "d8": NumeralLook(
        (150, 60, 150),
        (245, 245, 245),
        cv2.FONT_HERSHEY_DUPLEX,
        0.09,
        "dot",
        second=(200, 120, 200),
    ),
}
"""One make per kind, standing for a table's own dice."""


def teach_round(kind: str) -> tuple[float, float, float]:
    """Teach a synthetic set from one render per face; return the share of new throws' dice
    read right without and with the profile, and the median ms with it."""
    spec = TraySpec(
        size=(640, 480), side=(0.05, 0.07), floors=("dark", "felt"), look=TABLE_SETS[kind]
    )
    with tempfile.TemporaryDirectory() as tmp:
        folder, labels, photos = Path(tmp), {}, []
        for value in face_values(kind):
            tray = render_tray(7_000_000 + value, spec, dice=(kind,), values=(value,))
            photos.append(folder / f"{kind}_{value}.png")
            cv2.imwrite(str(photos[-1]), tray.image)
            labels[photos[-1].name] = {"die": kind, "value": value}
        (folder / "labels.json").write_text(json.dumps(labels))
        teach(folder / "profile", folder / "labels.json", photos)
        throws = [render_tray(seed, spec, dice=(kind,) * 3) for seed in range(7_100_000, 7_100_020)]
        items = [(t.image, tuple(Label(d.value, d.box, d.die) for d in t.dice)) for t in throws]
        plain = run(items, ReaderSettings())[0]
        taught = run(items, ReaderSettings(profile=str(folder / "profile")))[0]
    share = [t.right / max(t.dice, 1) for t in (plain, taught)]
    return share[0], share[1], statistics.median(taught.ms)


def teach_real(calibration: Calibration, items: list[Item], seed: int = 5) -> tuple[Tally, Tally]:
    """Teach numerals-taught's set from its own photos (one per face), then read each photo
    again turned about its die by a random angle and relit: the taught dice in new poses.
    Return the tallies without and with the profile."""
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder, labels, photos = Path(tmp), {}, []
        for k, (image, dice) in enumerate(items):
            photos.append(folder / f"taught_{k:03d}.png")
            cv2.imwrite(str(photos[-1]), image)
            labels[photos[-1].name] = {
                "dice": [{"die": d.die, "value": d.value, "box": list(d.box)} for d in dice]
            }
        (folder / "labels.json").write_text(json.dumps(labels))
        teach(folder / "profile", folder / "labels.json", photos)
        posed = [_posed(image, dice, rng) for image, dice in items]
        plain = run(posed, ReaderSettings(), calibration)[0]
        taught = run(posed, ReaderSettings(profile=str(folder / "profile")), calibration)[0]
    return plain, taught


def _posed(image: np.ndarray, dice: tuple[Label, ...], rng: np.random.Generator) -> Item:
    """Return a photo whose (one) die is turned where it lies by a random angle and relit:
    only a disc around the die changes, so the tray still matches its calibration."""
    h, w = image.shape[:2]
    box = dice[0].box
    cx, cy = (box[0] + box[2]) / 2 * w, (box[1] + box[3]) / 2 * h
    turn = cv2.getRotationMatrix2D((cx, cy), float(rng.uniform(0, 360)), 1.0)
    turned = cv2.warpAffine(image, turn, (w, h), borderMode=cv2.BORDER_REFLECT)
    lit = np.clip(turned.astype(np.float32) * rng.uniform(0.75, 1.2), 0, 255)
    radius = 0.8 * max((box[2] - box[0]) * w, (box[3] - box[1]) * h)
    disc = np.zeros((h, w), np.float32)
    cv2.circle(disc, (round(cx), round(cy)), round(radius), 1.0, -1)
    disc = cv2.GaussianBlur(disc, (0, 0), radius * 0.1)[..., None]
    posed = image.astype(np.float32) * (1 - disc) + lit * disc
    return posed.astype(np.uint8), dice


def real(models: list[Path], breakdown: bool) -> None:
    """Report the real photos: untaught kinds (cross-validated over the nets), and the rest."""
    calibration, items = real_photos()
    no_d4 = [(i, ls) for i, ls in items if ls and all(label.die != "d4" for label in ls)]
    names = ", ".join(m.name for m in models)
    report(
        f"numerals-taught, kinds untaught by {names}",
        *untaught(models, calibration, items),
        breakdown,
    )
    report(
        f"numerals-taught without the d4, untaught by {names}",
        *untaught(models, calibration, no_d4),
        breakdown,
    )
    seen = seen_kinds(models[0])
    if seen:
        mine = [(i, ls) for i, ls in no_d4 if all(x.die in seen for x in ls)]
        report(
            f"numerals-taught, kinds {models[0].name} learned from (not a score)",
            *run(mine, ReaderSettings(numeral_net=str(models[0])), calibration),
            breakdown,
        )


def held_out_values(pairs: list[str], step: int) -> None:
    """Print dice-values and numerals-taught read with kind nets held out of each fold, per
    fold, kind and group (`numeral_sets`); a fold with no net of its own says so."""
    nets = {}
    for pair in pairs:
        fold, _, path = pair.partition("=")
        if fold not in FOLDS:
            raise SystemExit(f"--kind-net {pair}: folds are {', '.join(FOLDS)}")
        held = load_session(Path(path)).get_modelmeta().custom_metadata_map.get("trained_on", "")
        if fold not in held.removeprefix("all but ").split("+"):
            raise SystemExit(f"--kind-net {pair}: that net learned from {fold} ({held})")
        nets[fold] = Path(path)
    settings = ReaderSettings()
    outcomes = read_all(dice_values(step), nets, settings, "dice-values")
    outcomes += read_all(numerals_taught(), nets, settings, "numerals-taught")
    unheld = sorted({o.photo.fold for o in outcomes} - set(nets))
    print(
        f"kind nets held out: {', '.join(sorted(nets)) or 'none'}"
        + (f"; **not held out** (shipped net): {', '.join(unheld)}" if unheld else "")
    )
    for by in ("fold", "kind", "group"):
        print(TABLE_HEADER.replace("| set |", f"| {by} |"))
        print("\n".join(table(outcomes, by)))


def main() -> None:
    """Run the benchmark and print Markdown rows."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--only", choices=["values", "real", "synth", "speed", "teach", "teach-real"], default=None
    )
    parser.add_argument(
        "--kind-net",
        action="append",
        default=[],
        metavar="FOLD=FILE",
        help="`values`: read FOLD (top, color, angle, wood, taught) with a kind net held out of it",
    )
    parser.add_argument("--step", type=int, default=1, help="`values`: every STEP-th photo")
    parser.add_argument("--synth", type=int, default=300)
    parser.add_argument("--breakdown", action="store_true")
    parser.add_argument(
        "--model",
        type=Path,
        action="append",
        help="numeral net(s) for `real`; several: trained with --leave-out",
    )
    args = parser.parse_args()
    cv2.setNumThreads(1)
    settings = ReaderSettings(numeral_net=str(args.model[0]) if args.model else None)
    read_dice(render_tray(0).image, settings=settings)  # load the nets before timing
    if args.only in (None, "values") and DATA.exists():
        held_out_values(args.kind_net, args.step)
    print(HEADER)
    if args.only in (None, "real") and DATA.exists():
        real(args.model or [MODEL], args.breakdown)
    if args.only in (None, "teach-real") and DATA.exists():
        calibration, items = real_photos()
        plain, taught = teach_real(calibration, [i for i in items if i[1]])
        print(plain.row("numerals-taught turned and relit, shipped reader"))
        print(taught.row("numerals-taught turned and relit, taught from its own photos"))
    if args.only in (None, "synth"):
        report(
            f"synthetic, every kind ({args.synth})",
            *run(synthetic(args.synth), settings),
            args.breakdown,
        )
    if args.only in (None, "speed"):
        print(f"median ms, 640x480 tray of every kind, one thread: {speed(settings):.1f}")
    if args.only in (None, "teach"):
        for kind in ("d20", "d12", "d10", "d8"):
            before, after, taught = teach_round(kind)
            print(
                f"taught {kind} set, one render per face: {100 * after:.1f} % of 60 new "
                f"throws' dice right with the profile, {100 * before:.1f} % without; "
                f"median {taught:.1f} ms a tray with it"
            )


if __name__ == "__main__":
    main()
