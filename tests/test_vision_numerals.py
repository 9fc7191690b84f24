"""Numeral dice: every kind read from synthetic trays, 6 told from 9, d100 pairs, kinds on
their way to the rules."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner
from pydantic import TypeAdapter, ValidationError

from tidetower.engine.dice import DieError, DieKind
from tidetower.engine.tray import DieRead, Reading, roll_of
from tidetower.firmware.cli import main
from tidetower.firmware.rolls import entered_face
from tidetower.vision.colours import colour_name
from tidetower.vision.dice.table import load_dice
from tidetower.vision.kinds import KINDS, check_face, face_values
from tidetower.vision.numerals.nets import CLASSES
from tidetower.vision.numerals.profile import load_profile
from tidetower.vision.numerals.teach import (
    TeachError,
    labelled,
    load_label_file,
    parse_labels,
    teach,
)
from tidetower.vision.read import pinned, read_dice
from tidetower.vision.score import Label, score
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import EVERY_KIND, TraySpec, render_tray
from tidetower.vision.synth.numerals import NumeralLook
from tidetower.vision.training.numeral_crops import real_numeral_crops

NUMERALS_TAUGHT = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "numerals-taught"

NUMERAL_KINDS = ("d6", "d8", "d10", "d10-tens", "d12", "d20")
SPEC = replace(EVERY_KIND, count=(1, 6), side=(0.05, 0.08))


def _die(kind: str, value: int, x: float) -> DieRead:
    return DieRead(kind, value, (x, 0.4, x + 0.1, 0.5), 0.9)


@pytest.mark.parametrize(
    ("tens", "units", "d100"), [(0, 0, 100), (0, 5, 5), (90, 0, 90), (40, 7, 47)]
)
def test_a_tens_and_a_units_d10_make_a_d100(tens: int, units: int, d100: int) -> None:
    reading = Reading((_die("d20", 12, 0.1), _die("d10-tens", tens, 0.4), _die("d10", units, 0.6)))
    assert [c.to_dict() for c in reading.combined] == [
        {"die": "d100", "value": d100, "dice": [1, 2]}
    ]
    assert reading.to_dict()["combined"] == [{"die": "d100", "value": d100, "dice": [1, 2]}]
    roll = roll_of(reading)
    assert roll.faces(DieKind.D100) == (d100,)
    assert roll.faces(DieKind.D20) == (12,)
    assert roll.faces(DieKind.D10) == ()


def test_two_pairs_pair_by_nearness() -> None:
    reading = Reading(
        (
            _die("d10-tens", 20, 0.1),
            _die("d10-tens", 70, 0.8),
            _die("d10", 9, 0.85),
            _die("d10", 3, 0.15),
        )
    )
    assert sorted((c.value, c.dice) for c in reading.combined) == [(23, (0, 3)), (79, (1, 2))]


def test_a_lone_units_d10_is_a_d10_and_a_lone_tens_die_is_refused() -> None:
    assert roll_of(Reading((_die("d10", 0, 0.2),))).faces(DieKind.D10) == (10,)
    assert "combined" not in Reading((_die("d10", 0, 0.2),)).to_dict()
    with pytest.raises(DieError, match="tens d10"):
        roll_of(Reading((_die("d10-tens", 30, 0.2),)))


def test_the_gm_types_faces_in_the_cameras_words() -> None:
    assert entered_face("d10", 10) == 0  # a d10's "10" is the face printed 0
    assert entered_face("d10-tens", 40) == 40
    assert entered_face("d100", 100) == 100
    for die, value in (("d10-tens", 45), ("d20", 21), ("d8", 0), ("d7", 3)):
        with pytest.raises(DieError):
            entered_face(die, value)


def test_every_kind_has_its_faces_and_classes() -> None:
    assert face_values("d10-tens") == tuple(range(0, 100, 10))
    assert face_values("d10") == tuple(range(10))
    for kind in KINDS:
        for value in face_values(kind):
            check_face(kind, value)
    for kind in NUMERAL_KINDS:
        assert {f"{kind}:{v}" for v in face_values(kind)} <= set(CLASSES)
    with pytest.raises(ValueError, match="d12 cannot show 13"):
        check_face("d12", 13)


def _read_share(spec: TraySpec, seeds: range) -> tuple[int, int, int]:
    """Return (dice, right, wrong) over synthetic trays."""
    dice = right = wrong = 0
    for seed in seeds:
        tray = render_tray(seed, spec)
        labels = tuple(Label(d.value, d.box, d.die) for d in tray.dice)
        result = score(read_dice(tray.image), labels)
        dice, right = dice + result.labelled, right + result.right
        wrong += result.wrong_value
    return dice, right, wrong


FLOORS = {"d6": 0.25, "d8": 0.25, "d10": 0.05, "d10-tens": 0.0, "d12": 0.08, "d20": 0.04}
"""Share of each kind's dice today's reader reads right on these 640x480 renders (measured
2026-12-02 with the recogniser and the kind net: d6 16, d8 17, d10 4, d10-tens 0, d12 6,
d20 3 of 52), less a margin: a floor against regressions, far from issue #25's target. The
renderer's numerals are small at 640x480 and unlike real dice's (docs/vision.md, limits)."""
WRONG = {"d6": 0.17, "d8": 0.1, "d10": 0.12, "d10-tens": 0.06, "d12": 0.04, "d20": 0.04}
"""Share read wrong on the same renders (measured: d6 7, d8 4, d10 5, d10-tens 2, d12 1,
d20 0 of 52), plus a margin: most are a numeral die read by the pip reader as a d6 showing
1 (a known defect, docs/vision.md); the real photos' figures are in BENCHMARKS.md."""


@pytest.mark.parametrize("kind", NUMERAL_KINDS)
def test_each_kind_reads_from_synthetic_trays(kind: str) -> None:
    spec = replace(SPEC, kinds=(kind,), numeral_d6=1.0 if kind == "d6" else 0.0)
    dice, right, wrong = _read_share(spec, range(5_000_000, 5_000_012))
    assert dice >= 20
    assert right >= FLOORS[kind] * dice, f"{kind}: {right} of {dice} right, {wrong} wrong"
    assert wrong <= WRONG[kind] * dice, f"{kind}: {wrong} of {dice} read as another face or kind"


def test_six_is_never_read_as_nine() -> None:
    confused = read = 0
    for seed in range(5_100_000, 5_100_030):
        rng = np.random.default_rng(seed)
        kind = str(rng.choice(["d8", "d10", "d12", "d20"]))
        tray = render_tray(seed, SPEC, dice=(kind,) * 3)
        for die in read_dice(tray.image).dice:
            truth = min(
                tray.dice, key=lambda t: abs(t.box[0] - die.box[0]) + abs(t.box[1] - die.box[1])
            )
            if truth.value in (6, 9) and die.value in (6, 9):
                read += 1
                confused += die.value != truth.value
    assert confused == 0, f"{confused} of {read} sixes and nines read as the other"


TABLE_SET = NumeralLook(
    body=(60, 150, 40), ink=(20, 20, 20), font=cv2.FONT_HERSHEY_TRIPLEX, stroke=0.14, marker="dot"
)
"""A table's own d20: green, black serif numerals, dotted 6 and 9."""
TABLE_SPEC = TraySpec(size=(640, 480), side=(0.055, 0.07), floors=("dark",), look=TABLE_SET)


def _teaching_photos(folder: Path) -> tuple[Path, list[Path]]:
    """Photograph the table's d20 once per face, as a teach pass does; return labels, photos."""
    labels, photos = {}, []
    for value in face_values("d20"):
        tray = render_tray(6_000_000 + value, TABLE_SPEC, dice=("d20",), values=(value,))
        path = folder / f"d20_{value:02d}.png"
        cv2.imwrite(str(path), tray.image)
        labels[path.name] = {"die": "d20", "value": value}
        photos.append(path)
    (folder / "labels.json").write_text(json.dumps(labels))
    return folder / "labels.json", photos


@pytest.mark.slow
def test_teach_one_photo_per_face_then_read_new_throws(tmp_path: Path) -> None:
    labels, photos = _teaching_photos(tmp_path)
    report = teach(tmp_path / "profile", labels, photos, {"d20": "green omen"})
    assert set(report.added) == {f"d20:{v}" for v in face_values("d20")}
    assert report.after >= report.before
    counts = {}
    for name, settings in (
        ("plain", ReaderSettings()),
        ("taught", ReaderSettings(profile=str(tmp_path / "profile"))),
    ):
        right = wrong = dice = 0
        for seed in range(6_100_000, 6_100_020):
            tray = render_tray(seed, TABLE_SPEC, dice=("d20", "d20"))
            labels_ = tuple(Label(d.value, d.box, d.die) for d in tray.dice)
            result = score(read_dice(tray.image, settings=settings), labels_)
            right, wrong = right + result.right, wrong + result.wrong_value
            dice += result.labelled
        counts[name] = (right, wrong, dice)
    (plain, plain_wrong, dice), (taught, taught_wrong, _) = counts["plain"], counts["taught"]
    assert dice >= 35
    # Today's net's embeddings tell one-shot taught faces apart only at a wide lead, so new
    # throws read about as without the profile (issue #13's 99 % is far off): the profile
    # must cost nothing there, and must know its own teaching photos.
    assert taught >= plain and taught_wrong <= plain_wrong, counts
    profile = load_profile(tmp_path / "profile")
    known = 0
    for path, value in zip(photos, face_values("d20"), strict=True):
        reading = read_dice(
            cv2.imread(str(path)), settings=ReaderSettings(profile=str(tmp_path / "profile"))
        )
        known += [(d.die, d.value) for d in reading.dice] == [("d20", value)]
    assert known >= 16, f"{known} of 20 taught photos read as taught"
    assert profile.names == {"d20": "green omen"}


@pytest.mark.slow
def test_a_teach_that_would_read_other_dice_worse_is_refused(tmp_path: Path) -> None:
    labels, photos = {}, []
    for seed in range(6_200_000, 6_200_012):  # trays like the check's, every value mislabelled
        tray = render_tray(seed, replace(SPEC, kinds=NUMERAL_KINDS[1:]))
        path = tmp_path / f"tray_{seed}.png"
        cv2.imwrite(str(path), tray.image)
        labels[path.name] = {
            "dice": [
                {
                    "die": d.die,
                    "value": face_values(d.die)[
                        (face_values(d.die).index(d.value) + 1) % len(face_values(d.die))
                    ],
                    "box": d.box,
                }
                for d in tray.dice
            ]
        }
        photos.append(path)
    (tmp_path / "labels.json").write_text(json.dumps(labels))
    with pytest.raises(TeachError, match="refused"):
        teach(tmp_path / "profile", tmp_path / "labels.json", photos)
    assert not (tmp_path / "profile").exists()


def test_teach_refuses_bad_labels_and_writes_nothing(tmp_path: Path) -> None:
    labels, photos = _teaching_photos(tmp_path)
    bad = json.loads(labels.read_text())
    bad[photos[0].name] = {"die": "d20", "value": 21}
    labels.write_text(json.dumps(bad))
    with pytest.raises(TeachError, match="d20 cannot show 21"):
        teach(tmp_path / "profile", labels, photos)
    assert not (tmp_path / "profile").exists()


@pytest.mark.parametrize(
    ("bgr", "name"),
    [
        ((240, 240, 240), "white"),
        ((20, 20, 20), "black"),
        ((40, 40, 200), "red"),
        ((200, 60, 40), "blue"),
        ((40, 200, 230), "yellow"),
        ((60, 180, 60), "green"),
    ],
)
def test_a_dice_colour_has_the_name_a_table_uses(bgr: tuple[int, int, int], name: str) -> None:
    assert colour_name(bgr) == name


def test_a_pinned_kind_in_another_colour_is_set_aside_not_counted() -> None:
    image = np.full((200, 400, 3), 30, np.uint8)
    image[50:150, 50:150] = (240, 240, 240)  # the white d20: the Omen
    image[50:150, 250:350] = (40, 40, 200)  # a red d20: not this table's Omen
    white = DieRead("d20", 20, (0.125, 0.25, 0.375, 0.75), 0.9)
    red = DieRead("d20", 1, (0.625, 0.25, 0.875, 0.75), 0.9)
    kept, aside = pinned(image, (white, red, _die("d8", 3, 0.5)), {"d20": "white"})
    assert [d.value for d in kept] == [20, 3]
    assert [a.die for a in aside] == [red]
    assert "only the white one counts" in aside[0].reason
    assert Reading(kept, (), 1.0, aside).to_dict()["set_aside"][0]["value"] == 1
    config = TypeAdapter(ReaderSettings)  # as the tower's config reads [camera.reader]
    assert config.validate_python({"pins": {"d20": "white"}}).pins == {"d20": "white"}
    with pytest.raises(ValidationError, match="mauve"):
        config.validate_python({"pins": {"d20": "mauve"}})


@pytest.mark.slow
def test_teach_at_the_simulated_tower_asks_for_every_face(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["teach", "--sim", "--die", "d8", "--name", "blue d8", str(tmp_path / "dice")]
    )
    assert result.exit_code == 0, result.output
    assert "throw the d8: 24 photo(s) of 8 face(s) to go (1 2 3 4 5 6 7 8)" in result.output
    assert "taught 8 faces" in result.output
    meta = json.loads((tmp_path / "dice" / "profile.json").read_text())
    assert set(meta["taught"]) == {f"d8:{v}" for v in range(1, 9)}
    assert meta["names"] == {"d8": "blue d8"}
    photos = sorted(p.name for p in (tmp_path / "dice" / "photos").glob("d8_*.png"))
    assert len(photos) == 24 and photos[:3] == ["d8_01_1.png", "d8_01_2.png", "d8_01_3.png"]
    (die,) = load_dice(tmp_path / "dice" / "dice")
    assert die.name == "blue d8" and die.taught() == dict.fromkeys(range(1, 9), 3)


def test_teach_from_photos_needs_its_labels() -> None:
    result = CliRunner().invoke(main, ["teach", "somewhere"])
    assert result.exit_code == 2
    assert "--labels LABELS.json IMAGE" in result.output


def test_real_numeral_crops_leave_out_the_kinds_held_out(tmp_path: Path) -> None:
    if not NUMERALS_TAUGHT.parents[1].exists():
        pytest.skip("../shared is not beside this clone (a user's clone): no real photos")
    crops = real_numeral_crops(NUMERALS_TAUGHT, frozenset({"d20", "d10"}), turns=1)
    kinds = {CLASSES[i].split(":")[0] for i in crops.labels}
    assert kinds == {"none", "d6", "d8", "d10-tens", "d12"}  # no d20, d10; d4 has no class
    assert crops.images.shape[1:] == (64, 64, 3)


def test_a_labels_list_of_file_and_dice_is_read_and_its_empty_tray_skipped(
    tmp_path: Path,
) -> None:
    labels, photos = _teaching_photos(tmp_path)
    by_name = json.loads(labels.read_text())
    empty = tmp_path / "empty_tray.png"
    cv2.imwrite(str(empty), cv2.imread(str(photos[0])))
    listed = [{"file": f"images/{name}", "dice": [die]} for name, die in by_name.items()]
    listed.append({"file": f"images/{empty.name}", "dice": []})
    labels.write_text(json.dumps(listed))
    raw = load_label_file(labels)
    assert parse_labels(raw, photos[0].name) == parse_labels(by_name, photos[0].name)
    assert parse_labels(raw, empty.name) == []
    dice, skipped = labelled(raw, [empty, *photos[:2]])
    assert skipped == (empty.name,) and len(dice) == 2
    with pytest.raises(TeachError, match="nothing to teach"):
        labelled(raw, [empty])


def test_the_shared_labels_file_is_read_as_it_is() -> None:
    if not NUMERALS_TAUGHT.parents[1].exists():
        pytest.skip("../shared is not beside this clone (a user's clone): no real photos")
    raw = load_label_file(NUMERALS_TAUGHT / "labels.json")
    photos = sorted((NUMERALS_TAUGHT / "images").iterdir())
    dice = {p.name: parse_labels(raw, p.name) for p in photos}
    assert dice["background_empty_tray.jpg"] == []
    assert sum(len(found) for found in dice.values()) == len(photos) - 1  # one die a photo
