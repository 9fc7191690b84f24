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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from vision_d6 import overrides, use_models

from tidetower.vision.colours import COLOURS
from tidetower.vision.d6 import nets
from tidetower.vision.numerals.teach import TeachError, teach
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
from tidetower.vision.synth import TraySpec, render_tray
from tidetower.vision.synth.render import BODIES, INK_NAMES, INKS

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "d6-tray"
SEED = 7_000_000
TEACH_SEED = 7_050_000
TEACH_READ_SEED = 7_060_000
Colour = tuple[int, int, int]
Post = Callable[[np.ndarray, np.random.Generator], np.ndarray]
BINS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)
"""Confidence bin edges; the last bin holds 1.0 itself."""
Outcome = tuple[float, bool]
"""A die read's confidence, and whether it was right."""


@dataclass(frozen=True)
class Domain:
    """One unseen setting: a group, a name, the trays' spec and what the camera does after."""

    group: str
    name: str
    spec: TraySpec = field(default_factory=TraySpec)
    post: Post | None = None
    slant: float = 0.0
    """Degrees the camera is turned from looking straight down."""
    alike: bool = False
    """Body and pips too alike in brightness for the renderer ever to pair them."""


@dataclass
class Result:
    """What reading one domain gave: its tally and every read's outcome."""

    domain: Domain
    tally: Tally = field(default_factory=Tally)
    outcomes: list[Outcome] = field(default_factory=list)


def tinted(gains: tuple[float, float, float]) -> Post:
    """Return a post step scaling the B, G and R channels: a light's or white balance's cast."""
    scale = np.array(gains, np.float32)
    return lambda image, rng: to_u8(image * scale)


def to_u8(image: np.ndarray) -> np.ndarray:
    """Return a float image clipped and rounded to 8 bits."""
    return np.clip(np.round(image), 0, 255).astype(np.uint8)


def dim(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return the photo under a third of the light, with the sensor's read noise on top."""
    noise = rng.normal(0, 2.0, image.shape)
    return to_u8(image * 0.3 + noise)


def uneven(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return the photo lit from one side, falling to a third, and vignetted."""
    h, w = image.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    u, v = xs / w - 0.5, ys / h - 0.5
    turn = rng.uniform(0, 2 * np.pi)
    side = 0.7 + 0.8 * (u * np.cos(turn) + v * np.sin(turn))
    light = np.clip(side, 0.3, 1.2) * (1 - 0.8 * (u * u + v * v))
    return to_u8(image * light[..., None])


def hard_shadows(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return the photo with sharp-edged shadows: the tower wall's over a part, and a bar's."""
    h, w = image.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    shade = np.ones((h, w), np.float32)
    for width in (None, rng.uniform(0.05, 0.15) * w):
        turn, at = rng.uniform(0, 2 * np.pi), rng.uniform(0.25, 0.75, 2) * (w, h)
        across = (xs - at[0]) * np.cos(turn) + (ys - at[1]) * np.sin(turn)
        inside = across > 0 if width is None else np.abs(across) < width / 2
        shade[inside] *= rng.uniform(0.35, 0.55)
    return to_u8(image * cv2.GaussianBlur(shade, (0, 0), 1.0)[..., None])


def blurred(sigma: float) -> Post:
    """Return a post step for a lens out of focus: a Gaussian blur of sigma pixels."""
    return lambda image, rng: np.asarray(cv2.GaussianBlur(image, (0, 0), sigma))


def shaken(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return the photo smeared by camera shake: a 9 px line at any angle."""
    kernel = np.zeros((9, 9), np.float32)
    turn = rng.uniform(0, 180)
    cv2.line(kernel, (0, 4), (8, 4), 1.0, 1)
    rot = cv2.getRotationMatrix2D((4, 4), turn, 1.0)
    kernel = np.asarray(cv2.warpAffine(kernel, rot, (9, 9)), np.float32)
    return np.asarray(cv2.filter2D(image, -1, kernel / kernel.sum()))


def sharpened(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return the photo over-sharpened, as phone cameras do: an unsharp mask of 1.5."""
    soft = cv2.GaussianBlur(image.astype(np.float32), (0, 0), 1.5)
    return to_u8(image * 2.5 - soft * 1.5)


def noisy(sigma: float) -> Post:
    """Return a post step adding sensor noise of sigma grey levels to every channel."""
    return lambda image, rng: to_u8(image + rng.normal(0, sigma, image.shape))


def jpeg(quality: int) -> Post:
    """Return a post step saving the photo as a JPEG of this quality and loading it back."""

    def step(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        _, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        return np.asarray(cv2.imdecode(data, cv2.IMREAD_COLOR))

    return step


def slant_view(shape: tuple[int, ...], degrees: float, rng: np.random.Generator) -> np.ndarray:
    """Return the homography of a camera turned this far about a random axis in the photo's
    plane (focal length the photo's longer side), scaled and moved to fit the frame."""
    h, w = shape[:2]
    f = float(max(w, h))
    k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    turn = rng.uniform(0, 2 * np.pi)
    axis = np.array([np.cos(turn), np.sin(turn), 0.0]) * np.radians(degrees)
    view = k @ cv2.Rodrigues(axis)[0] @ np.linalg.inv(k)
    corners = cv2.perspectiveTransform(
        np.array([[[0, 0], [w, 0], [w, h], [0, h]]], np.float64), view
    )[0]
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    s = min(w / (hi[0] - lo[0]), h / (hi[1] - lo[1]))
    shift = (np.array([w, h]) - s * (hi - lo)) / 2 - s * lo
    fit = np.array([[s, 0, shift[0]], [0, s, shift[1]], [0, 0, 1]])
    return np.asarray(fit @ view)


def slanted(
    image: np.ndarray, labels: tuple[Label, ...], degrees: float, rng: np.random.Generator
) -> tuple[np.ndarray, tuple[Label, ...]]:
    """Return the photo as a slanted camera sees it, the rim filled with the floor's colour,
    and the labels with each box's warped corners' bounding box."""
    h, w = image.shape[:2]
    view = slant_view(image.shape, degrees, rng)
    rim = np.median(np.concatenate([image[0], image[-1], image[:, 0], image[:, -1]]), axis=0)
    out = cv2.warpPerspective(
        image, view, (w, h), flags=cv2.INTER_LINEAR, borderValue=tuple(float(v) for v in rim)
    )
    moved = []
    for label in labels:
        x0, y0, x1, y1 = label.box
        box = np.array([[[x0 * w, y0 * h], [x1 * w, y0 * h], [x1 * w, y1 * h], [x0 * w, y1 * h]]])
        pts = cv2.perspectiveTransform(box, view)[0] / (w, h)
        lo, hi = np.clip(pts.min(axis=0), 0, 1), np.clip(pts.max(axis=0), 0, 1)
        moved.append(replace(label, box=(float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))))
    return np.asarray(out), tuple(moved)


def luma(c: Colour) -> float:
    """Return a BGR colour's brightness, as the renderer weighs it when it pairs pips."""
    return 0.114 * c[0] + 0.587 * c[1] + 0.299 * c[2]


def colour_domains() -> list[Domain]:
    """Return a domain per body colour and pip ink: plain (not marbled) dice of that pair."""
    out = []
    for body in COLOURS:
        colour = BODIES[body]
        for ink_name, ink in zip(INK_NAMES, INKS, strict=True):
            spec = TraySpec(dice_colour=(colour, ink), marbled=0.0)
            alike = abs(luma(colour) - luma(ink)) <= 70
            out.append(Domain("colour", f"{body} body, {ink_name} pips", spec, alike=alike))
    return out


def domains() -> list[Domain]:
    """Return every domain: the defaults, then one factor pushed at a time."""
    floors = {"dark": "dark felt", "felt": "coloured felt", "wood": "wood"}
    floors |= {"cloth": "woven cloth", "printed": "printed mat"}
    return [
        Domain("defaults", "default trays (grey floor)"),
        *(Domain("floor", name, TraySpec(floors=(kind,))) for kind, name in floors.items()),
        Domain("light", "warm", post=tinted((0.7, 0.92, 1.15))),
        Domain("light", "cold", post=tinted((1.18, 1.0, 0.75))),
        Domain("light", "dim (x0.3)", post=dim),
        Domain("light", "uneven", post=uneven),
        Domain("light", "hard shadows", post=hard_shadows),
        Domain("camera", "blur sigma 2 px", post=blurred(2.0)),
        Domain("camera", "camera shake 9 px", post=shaken),
        Domain("camera", "over-sharpened", post=sharpened),
        Domain("camera", "noise sigma 12", post=noisy(12.0)),
        Domain("camera", "noise sigma 25", post=noisy(25.0)),
        Domain("camera", "JPEG quality 40", post=jpeg(40)),
        Domain("camera", "JPEG quality 20", post=jpeg(20)),
        Domain("camera", "white balance green", post=tinted((0.85, 1.15, 0.85))),
        Domain("camera", "white balance magenta", post=tinted((1.12, 0.85, 1.12))),
        Domain("camera", "slant 15 deg", slant=15.0),
        Domain("camera", "slant 30 deg", slant=30.0),
        Domain("size", "dice ~25 px", TraySpec(side=(25 / 640, 25 / 640))),
        Domain("size", "dice ~200 px", TraySpec(side=(200 / 640,) * 2, count=(1, 4), heaped=0.0)),
        *colour_domains(),
    ]


def photo(domain: Domain, seed: int) -> tuple[np.ndarray, tuple[Label, ...]]:
    """Render one tray of a domain and return the photo the camera takes, with its labels."""
    tray = render_tray(seed, domain.spec)
    labels = tuple(Label(d.value, d.box, d.die) for d in tray.dice)
    rng = np.random.default_rng([seed, 14])
    image = tray.image if domain.post is None else domain.post(tray.image, rng)
    if domain.slant:
        image, labels = slanted(image, labels, domain.slant, rng)
    return image, labels


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
    tally, outcomes = read_all(photos, settings)
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
