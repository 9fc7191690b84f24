"""Teach the reader a table's own dice from labelled photos, into a profile folder.

Each labelled die is found in its photo as the reader finds it, cut at twelve turns, and
its embeddings stored under its class. A profile that would read the project's synthetic
trays worse than the shipped reader alone is refused: teaching must not cost other dice.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from tidetower.engine.files import HostileFile, load_json
from tidetower.engine.tray import Box
from tidetower.vision.colours import body_colour, lab_of
from tidetower.vision.d6.find import Candidate, find_dice
from tidetower.vision.d6.nets import face_crop
from tidetower.vision.d6.pips import count_pips
from tidetower.vision.dice.table import PROFILE_DICE, DiceFileError
from tidetower.vision.dice.teach import Seen, keep_taught, seen_in, taught_dice
from tidetower.vision.kinds import check_face
from tidetower.vision.numerals.faces import WINDOW, read_face
from tidetower.vision.numerals.nets import MARGIN, crop_size, run_numerals
from tidetower.vision.numerals.profile import (
    META,
    Profile,
    ProfileError,
    empty_profile,
    load_profile,
)
from tidetower.vision.numerals.signatures import TaughtFaces, family_of, signature
from tidetower.vision.progress import Along, quietly
from tidetower.vision.read import (
    ImageError,
    as_bgr,
    load_image,
    read_dice,
    refusal,
    to_work_size,
)
from tidetower.vision.score import LABEL_KINDS, Label, score
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import EVERY_KIND, render_tray

TURNS = tuple(float(t) for t in range(0, 360, 30))
"""Each taught die is cut at these turns: dice land at any angle."""
CHECK_SEED = 3_000_000
"""Seeds of the synthetic trays a new profile must read at least as well as before."""
CHECK_TRAYS = 40


class TeachError(ValueError):
    """Labels that cannot be taught, or a profile that would read worse: nothing is written."""


@dataclass(frozen=True)
class Taught:
    """One die to learn: the photo it is in, its class, and its box if the labels give one."""

    image: np.ndarray
    label: str
    box: Box | None


@dataclass(frozen=True)
class TeachReport:
    """What teaching did: views added per class, and the check that it costs nothing."""

    added: dict[str, int]
    before: float
    after: float
    skipped: tuple[str, ...] = ()
    """Photos labelled with no dice (an empty tray): nothing in them to teach."""
    dice: tuple[str, ...] = ()
    """The table's dice kept in the profile's `dice/`, each read by its own reader."""


def parse_labels(raw: Mapping[str, Any], name: str) -> list[tuple[str, int, Box | None]]:
    """Return (kind, value, box) for one photo's labels: one die, a tray with boxes, or
    none (`"dice": []`, the empty tray: nothing to teach from it)."""
    entry = raw.get(name)
    if entry is None:
        raise TeachError(f"{name}: not in the labels file")
    dice = entry.get("dice", [entry]) if isinstance(entry, dict) else None
    if not isinstance(dice, list):
        raise TeachError(f"{name}: expected {{'die', 'value'}} or {{'dice': [...]}}")
    out = []
    for die in dice:
        if not isinstance(die, dict):
            raise TeachError(f"{name}: a die is {{'die', 'value'}}, not {str(die)[:40]!r}")
        kind = LABEL_KINDS.get(str(die.get("die")), str(die.get("die")))
        value: Any = die.get("value")
        try:
            check_face(kind, value)
        except ValueError as error:
            raise TeachError(f"{name}: {error}") from None
        out.append((kind, int(value), _box(die.get("box"), name)))
    if len(out) > 1 and any(box is None for _, _, box in out):
        raise TeachError(f"{name}: a photo of several dice needs a box for each")
    return out


def _box(raw: Any, name: str) -> Box | None:
    """Return a label's box as four floats 0..1, or None when it has none."""
    if raw is None:
        return None
    try:
        x0, y0, x1, y1 = (float(v) for v in raw)
    except (TypeError, ValueError):
        raise TeachError(f"{name}: a box is four numbers x0, y0, x1, y1 (0..1)") from None
    if not 0 <= x0 < x1 <= 1 or not 0 <= y0 < y1 <= 1:
        raise TeachError(f"{name}: box {list(raw)} is not inside 0..1 with x0 < x1, y0 < y1")
    return x0, y0, x1, y1


def locate(work: np.ndarray, box: Box | None) -> Candidate | None:
    """Return the reader's candidate for a labelled die: in its box, else nearest the centre."""
    h, w = work.shape[:2]
    found = find_dice(work, ReaderSettings(find_threshold=0.3))
    if box is not None:
        inside = [
            c for c in found if box[0] * w <= c.x <= box[2] * w and box[1] * h <= c.y <= box[3] * h
        ]
        if inside:
            return max(inside, key=lambda c: c.heat)
        side = ((box[2] - box[0]) * w + (box[3] - box[1]) * h) / 2
        return Candidate((box[0] + box[2]) * w / 2, (box[1] + box[3]) * h / 2, side, 1.0)
    return min(found, key=lambda c: np.hypot(c.x - w / 2, c.y - h / 2), default=None)


def views(work: np.ndarray, c: Candidate) -> np.ndarray:
    """Return the net's unit embeddings of a die cut at every teaching turn."""
    size = crop_size()
    crops = np.stack([face_crop(work, c.x, c.y, c.side * MARGIN, t, size) for t in TURNS])
    return run_numerals(crops).embeddings


def learn(
    dice: Sequence[Taught],
    names: Mapping[str, str],
    base: Profile,
    to_frame: Callable[[np.ndarray], np.ndarray],
    along: Along = quietly,
    work_size: int = 640,
    seen: list[Seen] | None = None,
) -> tuple[Profile, dict[str, int]]:
    """Return the base profile extended with every die's views and, for numeral dice, the
    recogniser's signature of it; and the views per class. Each die as its own reader cuts
    it goes into `seen`, when given."""
    embeddings: list[np.ndarray] = []
    labels: list[str] = []
    added: dict[str, int] = {}
    faces = base.faces
    with along(dice, f"learning {len(dice)} dice") as each:
        for die in each:
            frame = to_frame(die.image)
            work = to_work_size(frame, work_size)
            candidate = locate(work, die.box)
            if candidate is None:
                raise TeachError(f"no die found for {die.label}: is it in the photo?")
            embeddings.append(views(work, candidate))
            labels.extend([die.label] * len(TURNS))
            added[die.label] = added.get(die.label, 0) + len(TURNS)
            faces = taught_face(faces, frame, work, candidate, die.label)
            if seen is not None:
                seen.append(seen_of(frame, work, candidate, die.label))
    return base.extended(np.concatenate(embeddings), labels, dict(names), faces), added


def seen_of(frame: np.ndarray, work: np.ndarray, c: Candidate, label: str) -> Seen:
    """Return a labelled die as the table's dice keep it (a d6 is a pip die when its pips
    count to its label)."""
    kind, value = label.split(":")[0], int(label.split(":")[1])
    pips = kind == "d6" and count_pips(work, c).value == value
    return seen_in(frame, c.box(work.shape[1], work.shape[0]), kind, value, pips)


def taught_face(
    faces: TaughtFaces, frame: np.ndarray, work: np.ndarray, c: Candidate, label: str
) -> TaughtFaces:
    """Return the taught signatures with this die's (a pip d6 has none: its pips are read)."""
    kind = label.split(":")[0]
    if kind not in WINDOW:
        return faces
    scale = frame.shape[1] / work.shape[1]
    read = read_face(frame, c.x * scale, c.y * scale, c.side * scale, kind)
    colour = body_colour(work, c.box(work.shape[1], work.shape[0]))
    family = family_of(kind)
    return faces.extended(family, label, lab_of(colour), signature(read, family))


def check_cost(
    profile: Profile,
    read: Callable[[np.ndarray, ReaderSettings], Any],
    settings: ReaderSettings,
    folder: Path,
    along: Along = quietly,
) -> tuple[float, float]:
    """Return the share of synthetic dice read right without and with the new profile."""
    seeds = range(CHECK_SEED, CHECK_SEED + CHECK_TRAYS)
    with along(seeds, f"checking on {CHECK_TRAYS} trays") as each:
        trays = [render_tray(seed, EVERY_KIND) for seed in each]
    profile.save(folder, 0)
    totals = []
    for with_profile, said in ((None, "without"), (str(folder), "with")):
        right = dice = 0
        with along(trays, f"reading them {said} the profile") as each_tray:
            for tray in each_tray:
                labels = tuple(Label(d.value, d.box, d.die) for d in tray.dice)
                result = score(read(tray.image, replace(settings, profile=with_profile)), labels)
                right, dice = right + result.right, dice + result.labelled
        totals.append(right / max(dice, 1))
    return totals[0], totals[1]


def load_label_file(path: Path) -> dict[str, Any]:
    """Read a labels file: an object from photo file name to its dice, or a list of
    `{"file", "dice"}` (the shared data sets' form), keyed here by the file's name."""
    try:
        raw = load_json(path)
    except HostileFile as error:
        raise TeachError(f"cannot read the labels: {error}") from None
    if isinstance(raw, list):
        return _by_file_name(raw, path)
    if not isinstance(raw, dict):
        raise TeachError(
            f"{path}: expected an object from photo file name to its dice,"
            ' or a list of {"file", "dice"}'
        )
    return raw


def _by_file_name(entries: list[Any], path: Path) -> dict[str, Any]:
    """A list of `{"file", "dice"}` as an object from each photo's file name to its entry."""
    labels: dict[str, Any] = {}
    for at, entry in enumerate(entries):
        file = entry.get("file") if isinstance(entry, dict) else None
        if not isinstance(file, str) or not file:
            raise TeachError(f'{path}: entry {at} is no {{"file", "dice"}}')
        name = Path(file).name
        if name in labels:
            raise TeachError(f"{path}: two entries for a photo named {name}")
        labels[name] = entry
    return labels


def labelled(
    raw: Mapping[str, Any], images: Sequence[Path]
) -> tuple[list[Taught], tuple[str, ...]]:
    """Each labelled die in the photos, and the photos labelled with none (skipped, not
    refused: an empty-tray photo belongs to a set); TeachError if no die is left."""
    dice, skipped = [], []
    for path in images:
        labels = parse_labels(raw, Path(path).name)
        if not labels:
            skipped.append(Path(path).name)
            continue
        try:
            image = load_image(path)
        except ImageError as error:
            raise TeachError(str(error)) from None
        dice += [Taught(image, f"{kind}:{value}", box) for kind, value, box in labels]
    if not dice:
        raise TeachError("no photo given is labelled with a die: nothing to teach")
    return dice, tuple(skipped)


def base_profile(folder: Path, width: int) -> Profile:
    """Return the profile already in a folder, or an empty one for a new folder."""
    if not (folder / META).exists():
        return empty_profile(width)
    try:
        return load_profile(folder)
    except ProfileError as error:
        raise TeachError(str(error)) from None


def teach(
    folder: Path,
    labels_path: Path,
    images: Sequence[Path],
    names: Mapping[str, str] | None = None,
    settings: ReaderSettings | None = None,
    along: Along = quietly,
    keep_in: Path | None = None,
) -> TeachReport:
    """Teach the dice in labelled photos into the profile folder (made or extended); raise
    TeachError, writing nothing, when a label or photo is wrong or the profile costs dice.
    Each die is kept with its photos in `keep_in` (else the profile's `dice/`). `along`
    shows how far it got (`progress` on a terminal)."""
    settings = replace(settings or ReaderSettings(), profile=None)
    dice, skipped = labelled(load_label_file(labels_path), images)

    def to_frame(image: np.ndarray) -> np.ndarray:
        reason = refusal(image, settings.work_size)
        bgr = None if reason else as_bgr(image)
        if bgr is None:
            raise TeachError(reason or "not a picture")
        return bgr

    base = base_profile(
        folder,
        run_numerals(np.zeros((1, crop_size(), crop_size(), 3), np.uint8)).embeddings.shape[1],
    )
    seen: list[Seen] = []
    profile, added = learn(dice, names or {}, base, to_frame, along, settings.work_size, seen)
    with tempfile.TemporaryDirectory(prefix="tidetower-teach-") as tmp:
        before, after = check_cost(
            profile, lambda im, s: read_dice(im, settings=s), settings, Path(tmp), along
        )
    if after < before:
        raise TeachError(
            f"refused: with this profile the reader gets {100 * after:.1f} % of "
            f"the check trays' dice right, without it {100 * before:.1f} %"
        )
    try:  # the dice first: a damaged die's file there refuses it all, writing nothing more
        kept = keep_taught(keep_in or folder / PROFILE_DICE, taught_dice(seen, names or {}))
    except DiceFileError as error:
        raise TeachError(str(error)) from None
    profile.save(folder, len(images))
    return TeachReport(added, before, after, skipped, tuple(d.name for d in kept))
