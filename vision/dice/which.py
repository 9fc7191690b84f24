"""Which of the table's dice a found die is, and its face read by that die's own reader.

A found die is one of the table's dice when its plastic is near that die's colour and that
die's reader matches it; of several such, the one whose reader matches best. A numeral die
of the table is then read by its own reader only (never the pip reader), a pip die keeps
the pip reader's face under its name, and a die none of the table's dice claims is read as
before, as a die the tower has not met.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from tidetower.engine.tray import DieRead, Unreadable
from tidetower.vision.colours import body_colour, lab_of
from tidetower.vision.dice.matcher import LEAST, FaceMatch, FaceMatcher, die_crop, keys_of
from tidetower.vision.dice.matcher import taught_matcher as _taught_matcher
from tidetower.vision.dice.table import TableDie, folder_state, load_dice
from tidetower.vision.kinds import face_text, face_values

COLOUR_NEAR = 30.0
"""How far (OpenCV's 8-bit Lab) a found die's plastic may be from a table die's and still be
it: light and shade move a die's colour by 10-20 between throws."""

Verdict = DieRead | Unreadable | None
OWN_READER = "its own reader"
"""How a table die's unsure find says who was unsure (and so that it is a table die's)."""
TAUGHT_PHOTOS = "matches with its taught photos"
"""How a table die's read says what it rests on."""


@dataclass(frozen=True)
class Known:
    """One of the table's dice as the reader uses it: its colour in Lab and its reader."""

    die: TableDie
    lab: np.ndarray
    matcher: FaceMatcher | None
    """None for a pip die (the pip reader reads its face) or one with no photos yet."""


def known(die: TableDie) -> Known:
    """Return a die ready to read: its reader built from its photos."""
    lab = lab_of(die.meta.colour)
    if die.meta.marks == "pips" or not die.faces:
        return Known(die, lab, None)
    crops = list(die.crops)
    return Known(die, lab, _taught_matcher(crops, list(die.faces), face_values(die.kind)))


def table_at(folder: Path) -> tuple[Known, ...]:
    """Return the table's dice in a folder, built once until a file in it changes."""
    return _built(str(folder), folder_state(folder))


@lru_cache(maxsize=8)
def _built(folder: str, state: tuple[tuple[str, int, int], ...]) -> tuple[Known, ...]:
    """The dice of a folder in a given state (the cache key), each with its reader."""
    return tuple(_ready(die) for die in load_dice(Path(folder)))


_READY: OrderedDict[str, Known] = OrderedDict()
_READY_LOCK = threading.Lock()


def _ready(die: TableDie) -> Known:
    """`known(die)`, built once per die's content: copies of one die (the practice dice laid
    out beside every simulated store) share one reader."""
    digest = hashlib.sha256(die.meta.model_dump_json().encode())
    digest.update(np.asarray(die.faces, np.int16).tobytes())
    digest.update(np.ascontiguousarray(die.crops).data)
    key = digest.hexdigest()
    with _READY_LOCK:  # towers in one process (the tests') read from their own threads
        if key not in _READY:
            _READY[key] = known(die)
            while len(_READY) > 32:
                _READY.popitem(last=False)
        return _READY[key]


def by_table(frame: np.ndarray, verdicts: list[Verdict], table: tuple[Known, ...]) -> list[Verdict]:
    """Read each found die by the table die it is, where one claims it; finds that lie on
    one another, one of them a table die's (a die the finder saw in parts), are one die."""
    if not table:
        return verdicts
    finds = [told(frame, v, table) for v in verdicts if v is not None]
    return [*joined(frame, finds, table), *(v for v in verdicts if v is None)]


def joined(
    frame: np.ndarray, finds: list[DieRead | Unreadable], table: tuple[Known, ...]
) -> list[Verdict]:
    """Join each group of touching finds that a table die claims into one die, read again."""
    out: list[Verdict] = []
    for group in _groups(finds, frame.shape[1], frame.shape[0]):
        if len(group) == 1 or not any(_claimed(f) for f in group):
            out.extend(group)
            continue
        box = (
            min(f.box[0] for f in group),
            min(f.box[1] for f in group),
            max(f.box[2] for f in group),
            max(f.box[3] for f in group),
        )
        out.append(told(frame, Unreadable(box, "found in parts"), table))
    return out


def _groups(finds: list[DieRead | Unreadable], w: int, h: int) -> list[list[DieRead | Unreadable]]:
    """Gather finds whose centres lie within three quarters of a die of each other."""
    label = list(range(len(finds)))
    for i in range(len(finds)):
        for j in range(i):
            if _touching(finds[i], finds[j], w, h):
                old, new = label[i], label[j]
                label = [new if x == old else x for x in label]
    return [[f for f, x in zip(finds, label, strict=True) if x == g] for g in sorted(set(label))]


def _touching(a: DieRead | Unreadable, b: DieRead | Unreadable, w: int, h: int) -> bool:
    """True when two finds' centres are closer than 3/4 of the larger one's side (px)."""
    ax, ay = (a.box[0] + a.box[2]) / 2 * w, (a.box[1] + a.box[3]) / 2 * h
    bx, by = (b.box[0] + b.box[2]) / 2 * w, (b.box[1] + b.box[3]) / 2 * h
    side = max(
        (a.box[2] - a.box[0]) * w,
        (a.box[3] - a.box[1]) * h,
        (b.box[2] - b.box[0]) * w,
        (b.box[3] - b.box[1]) * h,
    )
    return bool(np.hypot(ax - bx, ay - by) < 0.75 * side)


def _claimed(verdict: DieRead | Unreadable) -> bool:
    """True for a find a table die's own reader spoke for."""
    if isinstance(verdict, DieRead):
        return TAUGHT_PHOTOS in verdict.check
    return OWN_READER in verdict.reason


def told(
    frame: np.ndarray, verdict: DieRead | Unreadable, table: tuple[Known, ...]
) -> DieRead | Unreadable:
    """One found die, read by the table die it is (or as it was, when none claims it); a
    die whose pips were counted is a pip die, never one of the table's numeral dice."""
    lab = lab_of(body_colour(frame, verdict.box))
    near = [k for k in table if float(np.linalg.norm(k.lab - lab)) <= COLOUR_NEAR]
    counted = isinstance(verdict, DieRead) and verdict.check.endswith("pips counted")
    readers = [] if counted else [k for k in near if k.matcher is not None]
    if readers:
        keys = keys_of(die_crop(frame, verdict.box))
        reads = [(k, k.matcher.judge(k.matcher.scores(keys))) for k in readers if k.matcher]
        best, match = max(reads, key=lambda r: r[1].score)
        if match.score >= LEAST:
            return own_read(verdict, best, match)
    pips = [k for k in near if k.die.meta.marks == "pips"]
    if pips and isinstance(verdict, DieRead) and verdict.die == "d6":
        return DieRead(
            "d6",
            verdict.value,
            verdict.box,
            verdict.confidence,
            verdict.check,
            False,
            pips[0].die.name,
        )
    return verdict


def own_read(verdict: DieRead | Unreadable, die: Known, match: FaceMatch) -> DieRead | Unreadable:
    """The face a table die's own reader answers, with the untaught reader as a second
    opinion: a sure face it contradicts, or an unsure one it does not settle, goes to the
    GM with the likeliest faces; an unsure face it reads among the likeliest two is said."""
    name, kind = die.die.name, die.die.kind
    read = verdict if isinstance(verdict, DieRead) and verdict.die == kind else None
    second = read.value if read is not None else None
    if match.face is not None and second in (None, match.face):
        runner = match.ranked[1][1] if len(match.ranked) > 1 else 0
        agreed = " and the recogniser" if second is not None else ""
        check = f"{match.score} {TAUGHT_PHOTOS}{agreed}"
        return DieRead(
            kind, match.face, verdict.box, match.score / (match.score + runner), check, False, name
        )
    if match.face is None and read is not None and read.value in match.likeliest:
        check = f"the recogniser, one of the two {TAUGHT_PHOTOS} likeliest"
        return DieRead(kind, read.value, read.box, read.confidence, check, False, name)
    faces = match.likeliest if second is None else (match.likeliest[0], second)
    said = " or ".join(face_text(kind, f) for f in faces)
    reason = f"{name}: {OWN_READER} is not sure ({said})"
    return Unreadable(verdict.box, reason, kind, faces, name)
