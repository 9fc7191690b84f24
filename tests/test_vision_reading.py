"""The result types and scoring that other tools depend on."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tidetower.engine.tray import DieRead, Reading, Unreadable
from tidetower.vision.score import (
    DEV_FOLDS,
    FOLDS,
    Label,
    fold_of,
    iou,
    matches,
    score,
    split_of,
)


def test_reading_json_matches_cli_contract() -> None:
    reading = Reading(
        (DieRead("d6", 4, (0.1, 0.2, 0.3, 0.4), 0.97),),
        (Unreadable((0.5, 0.5, 0.6, 0.6), "half out of frame"),),
        12.34,
    )
    body = json.loads(json.dumps(reading.to_json("tray.jpg")))
    assert body == {
        "image": "tray.jpg",
        "dice": [{"die": "d6", "value": 4, "box": [0.1, 0.2, 0.3, 0.4], "confidence": 0.97}],
        "unreadable": [{"box": [0.5, 0.5, 0.6, 0.6], "reason": "half out of frame"}],
        "ms": 12.34,
    }
    assert list(body) == ["image", "dice", "unreadable", "ms"]


def test_results_are_frozen() -> None:
    die = DieRead("d6", 1, (0, 0, 1, 1), 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        die.value = 2  # type: ignore[misc]


def test_match_by_centre_or_iou() -> None:
    label = (0.1, 0.1, 0.2, 0.2)
    assert matches((0.12, 0.12, 0.26, 0.26), label)  # centre inside, IoU under 0.3
    assert not matches((0.3, 0.3, 0.4, 0.4), label)
    assert iou(label, label) == pytest.approx(1.0)
    assert iou((0.0, 0.0, 0.2, 0.1), (0.1, 0.0, 0.3, 0.1)) == pytest.approx(1 / 3)


def test_score_counts_wrong_missed_extra_and_unreadable() -> None:
    labels = (
        Label(3, (0.0, 0.0, 0.1, 0.1)),
        Label(5, (0.5, 0.5, 0.6, 0.6)),
        Label(2, (0.8, 0.8, 0.9, 0.9)),
        Label(4, (0.7, 0.1, 0.8, 0.2)),
    )
    reading = Reading(
        (
            DieRead("d6", 3, (0.0, 0.0, 0.1, 0.1), 0.9),
            DieRead("d6", 6, (0.5, 0.5, 0.6, 0.6), 0.8),
            DieRead("d6", 1, (0.3, 0.3, 0.35, 0.35), 0.9),
        ),
        (Unreadable((0.8, 0.8, 0.9, 0.9), "unsure"),),
    )
    s = score(reading, labels)
    assert (s.right, s.wrong_value, s.false_positives, s.unreadable_on_die, s.missed) == (
        1,
        1,
        1,
        1,
        1,
    )
    assert not s.all_right


def test_a_read_takes_the_label_it_overlaps_most_not_a_touching_neighbours() -> None:
    # loose label boxes of two touching dice: the first read's centre lies in both
    left, right = Label(2, (0.10, 0.10, 0.24, 0.22)), Label(5, (0.17, 0.10, 0.31, 0.22))
    five = DieRead("d6", 5, (0.18, 0.11, 0.28, 0.21), 0.99)  # centre in both labels
    assert matches(five.box, left.box) and matches(five.box, right.box)
    reading = Reading((five, DieRead("d6", 2, (0.11, 0.11, 0.21, 0.21), 0.90)))
    s = score(reading, (left, right))
    assert (s.right, s.wrong_value, s.false_positives, s.missed) == (2, 0, 0, 0)
    assert s.all_right


def test_split_is_by_name_alone() -> None:
    assert split_of("images/IMG_20191208_111228.jpg") == split_of("IMG_20191208_111228.jpg")
    assert {split_of(f"IMG_{i}.jpg") for i in range(50)} == {"dev", "test"}


def test_the_folds_of_dev_share_no_photo_and_leave_none_out() -> None:
    dev = [f"IMG_{i}.jpg" for i in range(300) if split_of(f"IMG_{i}.jpg") == "dev"]
    folds = [{n for n in dev if fold_of(n) == fold} for fold in sorted(DEV_FOLDS)]
    assert all(folds) and sum(map(len, folds)) == len(dev) == len(set().union(*folds))


def test_every_photo_has_one_fold_and_the_test_fold_is_the_test_split() -> None:
    names = [f"IMG_{i}.jpg" for i in range(300)]
    assert {fold_of(n) for n in names} == set(FOLDS)
    assert all((fold_of(n) == "test") == (split_of(n) == "test") for n in names)
