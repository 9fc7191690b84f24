"""The kind net and the recogniser together: kinds on real photos of many makers' dice, a
round trip through rendered faces of every kind, and shape against numerals."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from tidetower.engine.tray import DieRead, Unreadable
from tidetower.vision.d6.find import Candidate
from tidetower.vision.kinds import face_values
from tidetower.vision.numerals.decide import Die, Shape, judge_numeral
from tidetower.vision.numerals.faces import read_face
from tidetower.vision.read import read_dice
from tidetower.vision.score import load_labels
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import EVERY_KIND, render_tray
from tidetower.vision.training.kind_crops import framed

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
VALUES = SHARED / "dice-values"
TAUGHT = SHARED / "numerals-taught"
needs_shared = pytest.mark.skipif(
    not VALUES.exists() or not TAUGHT.exists(),
    reason="../shared/data (dice-values, numerals-taught) is not beside this clone",
)
CAMERA = replace(EVERY_KIND, size=(1296, 972), side=(0.065, 0.075), count=(1, 1))
"""A tower camera's frame: 1296x972, one die about 90 px across."""


def _nearest_kind(reading: object) -> str | None:
    """Return the kind the reader gave the die nearest the middle of the frame."""
    found = [*reading.dice, *reading.unreadable]  # type: ignore[attr-defined]
    if not found:
        return None
    best = min(
        found,
        key=lambda d: abs((d.box[0] + d.box[2]) / 2 - 0.5) + abs((d.box[1] + d.box[3]) / 2 - 0.5),
    )
    return best.die


@needs_shared
@pytest.mark.slow
def test_kinds_on_real_photos_of_many_makers_dice() -> None:
    """A fixed sample: every 60th dice-values photo (set in a tower-sized frame) and every
    numerals-taught photo. The shipped kind net learned from these photos, so this is a
    floor against regressions; the held-out figures are bench/vision_numerals.py's."""
    labels = json.loads((VALUES / "labels.json").read_text())
    right = seen = wrong_values = 0
    for name in sorted(labels)[::60]:
        canvas, _, _ = framed(cv2.imread(str(VALUES / "images" / name)))
        reading = read_dice(canvas)
        seen += 1
        right += _nearest_kind(reading) == labels[name]["die"]
        wrong_values += sum(
            d.value != labels[name]["value"]
            for d in reading.dice[:1]
            if d.die == labels[name]["die"]
        )
    for item in load_labels(TAUGHT):
        for label in item.dice:
            reading = read_dice(cv2.imread(str(item.path)))
            seen += 1
            right += _nearest_kind(reading) == label.die
    assert seen >= 160
    assert right >= 0.8 * seen, f"kind right on {right} of {seen}"
    assert wrong_values <= 2, f"{wrong_values} dice read as another face of their kind"


ROUND_TRIP = [
    *(("d20", v) for v in (1, 6, 9, 11, 17, 20)),
    *(("d12", v) for v in (6, 9, 12)),
    *(("d10", v) for v in (0, 6, 9)),
    *(("d10-tens", v) for v in (0, 60, 90)),
    *(("d8", v) for v in (6, 8)),
    *(("d6", v) for v in (3, 6)),
]


def test_the_recogniser_reads_rendered_faces_back_or_says_it_is_unsure() -> None:
    """Each face rendered on a tower camera's frame at four poses: never read sure as another
    face, the face among the two it hesitates between in at least half the poses, and some
    read sure. The renderer's numerals are harder than real dice's (docs/vision.md): 16 of
    the 76 are read sure today, so the floor is 10."""
    settings = ReaderSettings()
    sure = 0
    for kind, value in ROUND_TRIP:
        close = 0
        for pose in range(4):
            tray = render_tray(9_100_000 + 97 * pose + value, CAMERA, dice=(kind,), values=(value,))
            h, w = tray.image.shape[:2]
            x0, y0, x1, y1 = tray.dice[0].box
            side = ((x1 - x0) * w + (y1 - y0) * h) / 2
            read = read_face(tray.image, (x0 + x1) / 2 * w, (y0 + y1) / 2 * h, side, kind)
            best = read.faces[0]
            if read.lead >= settings.numeral_lead:
                assert (best.kind, best.value) == (kind, value), f"{kind} {value} read as {best}"
                sure += 1
            close += (kind, value) in {(f.kind, f.value) for f in read.faces[:2]}
        assert close >= 2, f"{kind} {value}: among the two likeliest in {close} of 4 poses"
    assert sure >= 10, f"{sure} of {4 * len(ROUND_TRIP)} rendered faces read sure"


@pytest.mark.xfail(
    strict=True,
    reason="known defect: the units d10 of the 00 pair is read by the pip reader as a d6 "
    "showing 1 (docs/vision.md, limits); strict, so the day it reads right this says so",
)
def test_a_d100_pair_of_66_and_99_and_00_reads_as_itself() -> None:
    for tens, units in ((60, 6), (90, 9), (0, 0)):
        tray = render_tray(
            9_200_000 + tens + units,
            replace(CAMERA, count=(2, 2)),
            dice=("d10-tens", "d10"),
            values=(tens, units),
        )
        reading = read_dice(tray.image)
        read = {(d.die, d.value) for d in reading.dice}
        unsure = {d.die for d in reading.unreadable}
        for die in tray.dice:
            assert (die.die, die.value) in read or die.die in unsure, (die, reading)
        assert not {(k, v) for k, v in read} - {(d.die, d.value) for d in tray.dice}


@needs_shared
def test_a_die_whose_shape_and_numerals_disagree_is_unreadable_with_both() -> None:
    item = next(i for i in load_labels(TAUGHT) if i.path.name == "d20_A_17.jpg")
    frame = cv2.imread(str(item.path))
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = item.dice[0].box
    side = ((x1 - x0) * w + (y1 - y0) * h) / 2
    scale = 640 / w
    c = Candidate((x0 + x1) / 2 * 640, (y0 + y1) / 2 * h * scale, side * scale, 1.0)
    work = cv2.resize(frame, (640, round(h * scale)), interpolation=cv2.INTER_AREA)
    die = Die(frame, work, c, ((x0 + x1) / 2 * w, (y0 + y1) / 2 * h, side), (640, work.shape[0]))
    settings = ReaderSettings(numeral_lead=1.0)  # this photo's 17 leads its 1 by 1.6 nats
    as_d20 = judge_numeral(die, Shape("d20", 0.95, 0.0), settings)
    assert isinstance(as_d20, DieRead) and (as_d20.die, as_d20.value) == ("d20", 17)
    as_d8 = judge_numeral(die, Shape("d8", 0.95, 0.0), settings)
    assert isinstance(as_d8, Unreadable) and as_d8.die == "d8"
    assert "its shape says d8" in as_d8.reason and "its numerals say 17" in as_d8.reason


def test_every_face_of_every_kind_is_a_face_the_recogniser_can_score() -> None:
    blank = np.full((972, 1296, 3), 90, np.uint8)
    for kind in ("d4", "d6", "d8", "d10", "d12", "d20"):
        read = read_face(blank, 648, 486, 90, kind)
        kinds = {"d10": {"d10", "d10-tens"}}.get(kind, {kind})
        expected = {(k, v) for k in kinds for v in face_values(k)}
        assert {(f.kind, f.value) for f in read.faces} == expected
