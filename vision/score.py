"""Score reads against labels the way issue #4 defines, and the fixed dev/test split of d6-tray."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import statistics
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from tidetower.engine.tray import Box, DieRead, Reading, Unreadable

TEST_SHARE = 3
"""A photo is in the test split when sha256(file name) % 10 is below this (about 30 %)."""


DEVVAL_DIGITS = (3, 4, 5)
"""Dev photos whose hash ends in these digits (mod 10) are dev-val: held out of training
when comparing variants, so that choices are judged on photos no net has seen."""
DEV_FOLDS = {"a": DEVVAL_DIGITS, "b": (6, 7), "c": (8, 9)}
"""Dev split three ways for k-fold comparisons; fold "a" is dev-val."""
FOLDS = {"test": tuple(range(TEST_SHARE)), **DEV_FOLDS}
"""Every photo in exactly one fold: the test split and dev's three, for cross-validation."""


def _digit(file_name: str) -> int:
    """Return sha256(base name) mod 10: the fixed, content-blind key of every split."""
    return int(hashlib.sha256(Path(file_name).name.encode()).hexdigest(), 16) % 10


def split_of(file_name: str) -> str:
    """Return "test" or "dev" for a photo, from a hash of its base name alone."""
    return "test" if _digit(file_name) < TEST_SHARE else "dev"


def fold_of(file_name: str) -> str:
    """Return the fold a photo belongs to: "test", or "a", "b" or "c" of dev."""
    return next(fold for fold, digits in FOLDS.items() if _digit(file_name) in digits)


RUNE55_LEARNED = ("rune55-train", "rune55-valid")
"""The folds of d6-rune55 nets may learn from: its maker's train and valid splits; its test
split ("rune55-test") is only ever read."""


def rune55_fold(photo: Path) -> str:
    """Return a d6-rune55 photo's fold, "rune55-" and the split its maker gave it (meta.json
    beside its images folder)."""
    return f"rune55-{_rune55_meta(photo.resolve().parent.parent)[photo.name]['split']}"


@cache
def _rune55_meta(folder: Path) -> dict[str, dict[str, str]]:
    meta: dict[str, dict[str, str]] = json.loads((folder / "meta.json").read_text())
    return meta


@dataclass(frozen=True)
class Label:
    """One labelled die."""

    value: int
    box: Box
    die: str = "d6"


LABEL_KINDS = {"d10-units": "d10"}
"""Kind names some label sets use, in the reader's words."""


@dataclass(frozen=True)
class LabelledImage:
    """One labelled photo of the set."""

    path: Path
    dice: tuple[Label, ...]

    @property
    def split(self) -> str:
        """Return the split this photo belongs to."""
        return split_of(self.path.name)


LABEL_FIXES = Path(__file__).resolve().parent / "label_fixes.json"
"""Dice the shared label sets got wrong, each checked by eye: applied wherever they are read."""


def load_labels(folder: Path, fixed: bool = True) -> list[LabelledImage]:
    """Read a folder's labels.json into labelled photos with absolute paths, with the
    project's fixes to that set applied (unless not `fixed`)."""
    raw = json.loads((folder / "labels.json").read_text())
    if isinstance(raw, dict):  # the tray form teach reads: {name: {"dice": [...]}}
        raw = [{"file": f"images/{name}", **item} for name, item in sorted(raw.items())]
    fixes = json.loads(LABEL_FIXES.read_text()).get(folder.name, {}) if fixed else {}
    return [
        LabelledImage(
            folder / item["file"],
            _fixed(
                tuple(
                    Label(
                        int(d["value"]),
                        _box(d["box"]),
                        LABEL_KINDS.get(d.get("die", "d6"), d.get("die", "d6")),
                    )
                    for d in item["dice"]
                ),
                fixes.get(item["file"], []),
            ),
        )
        for item in raw
    ]


def _fixed(labels: tuple[Label, ...], fixes: list[dict[str, Any]]) -> tuple[Label, ...]:
    """Apply a photo's fixes: a wrong face (`was`) on the label nearest the box is set right,
    and a die with no label (`was` null) is added."""
    out = list(labels)
    for fix in fixes:
        box = _box(fix["box"])
        if fix["was"] is None:
            out.append(Label(int(fix["value"]), box, fix.get("die", "d6")))
            continue
        at = best_match(box, tuple(out), list(range(len(out))))
        if at is None or out[at].value != fix["was"]:
            raise ValueError(f"label fix {fix} matches no label showing {fix['was']}")
        out[at] = Label(int(fix["value"]), out[at].box, out[at].die)
    return tuple(out)


def _box(values: list[float]) -> Box:
    """Return a JSON list as a box tuple."""
    x0, y0, x1, y1 = (float(v) for v in values)
    return (x0, y0, x1, y1)


def iou(a: Box, b: Box) -> float:
    """Return the intersection over union of two boxes."""
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def matches(read: Box, label: Box) -> bool:
    """Return whether a read box matches a label: centre inside it, or IoU at least 0.3."""
    cx, cy = (read[0] + read[2]) / 2, (read[1] + read[3]) / 2
    inside = label[0] <= cx <= label[2] and label[1] <= cy <= label[3]
    return inside or iou(read, label) >= 0.3


@dataclass(frozen=True)
class ImageScore:
    """How one reading compares with its labels."""

    labelled: int
    right: int
    wrong_value: int
    unreadable_on_die: int
    missed: int
    false_positives: int
    spurious_unreadable: int = 0
    kind_right: int = 0
    """Dice found (read or unreadable) whose kind was named right."""

    @property
    def all_right(self) -> bool:
        """Return whether every die was read right and nothing extra was reported."""
        return (
            self.right == self.labelled
            and self.false_positives == 0
            and self.spurious_unreadable == 0
        )


def best_match(box: Box, labels: tuple[Label, ...], free: list[int]) -> int | None:
    """Return the free label a box matches best (highest IoU), or None if it matches none.

    Label boxes are loose, so a read of one die can also match its touching neighbour's
    label; taking the best match keeps it from stealing the neighbour's.
    """
    candidates = [i for i in free if matches(box, labels[i].box)]
    return max(candidates, key=lambda i: iou(box, labels[i].box), default=None)


@dataclass(frozen=True)
class Matched:
    """Each read and unreadable die of a reading with the label it matched (None: no die
    there), and the labels nothing matched (missed)."""

    dice: list[tuple[DieRead, Label | None]]
    unreadable: list[tuple[Unreadable, Label | None]]
    missed: list[Label]


def match(reading: Reading, labels: tuple[Label, ...]) -> Matched:
    """Match reads to labels one to one, greedily by confidence, then the unreadable dice."""
    free = list(range(len(labels)))

    def take(box: Box) -> Label | None:
        hit = best_match(box, labels, free)
        if hit is None:
            return None
        free.remove(hit)
        return labels[hit]

    dice = [(d, take(d.box)) for d in sorted(reading.dice, key=lambda d: -d.confidence)]
    unreadable = [(u, take(u.box)) for u in reading.unreadable]
    return Matched(dice, unreadable, [labels[i] for i in free])


def is_right(die: DieRead, label: Label | None) -> bool:
    """Return whether a read names its label's kind and value."""
    return label is not None and (die.die, die.value) == (label.die, label.value)


def score(reading: Reading, labels: tuple[Label, ...]) -> ImageScore:
    """Match reads to labels one to one, greedily by confidence, and count the outcomes."""
    m = match(reading, labels)
    found = [(d.die, label) for d, label in m.dice if label is not None]
    asked = [(u.die, label) for u, label in m.unreadable if label is not None]
    right = sum(is_right(d, label) for d, label in m.dice)
    return ImageScore(
        labelled=len(labels),
        right=right,
        wrong_value=len(found) - right,
        unreadable_on_die=len(asked),
        missed=len(m.missed),
        false_positives=len(m.dice) - len(found),
        spurious_unreadable=len(m.unreadable) - len(asked),
        kind_right=sum(kind == label.die for kind, label in found + asked),
    )


def read_outcomes(reading: Reading, labels: tuple[Label, ...]) -> list[tuple[DieRead, bool]]:
    """Return each die read, surest first, with whether it was right: matched to labels as
    score() matches them, a read that matches no label (a false positive) being wrong."""
    return [(d, is_right(d, label)) for d, label in match(reading, labels).dice]


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
    wrong: int = 0
    missed: int = 0
    kind_right: int = 0
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
        self.wrong += s.wrong_value
        self.missed += s.missed
        self.kind_right += s.kind_right
        self.ms.append(ms)

    def absorb(self, other: Tally) -> None:
        """Add another set's totals to these (pooling cross-validation folds)."""
        for name in (f.name for f in dataclasses.fields(self)):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def counts(self) -> str:
        """Return the raw counts behind the row: where every die that was not right went."""
        return (
            f"right {self.right} / {self.dice}, wrong value {self.wrong}, unreadable "
            f"{self.unreadable}, missed {self.missed}, false positives {self.false_positives}, "
            f"stray unreadable {self.spurious_unreadable}, photos all right {self.all_right}"
        )

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
