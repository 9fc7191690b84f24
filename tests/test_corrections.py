"""The GM's corrections kept as labelled examples, and learning from them: checked, adopted
or refused, rolled back; a re-read or an undo followed by the faces typed in is kept too."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.tray import DieRead, Reading, TowerState, Unreadable
from tidetower.firmware.corrections import Corrections, by_hand
from tidetower.firmware.learn import (
    Learner,
    LearnStatus,
    learn_from_corrections,
)
from tidetower.firmware.profiles import rollback
from tidetower.firmware.sim import sim_config, simulated_parts
from tidetower.firmware.tower import Tower
from tidetower.vision.numerals.profile import load_profile, previous_of
from tidetower.vision.numerals.teach import TeachError, parse_labels
from tidetower.vision.read import read_dice
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import TraySpec, render_tray
from tidetower.vision.synth.numerals import NumeralLook

LEARNING = 600.0
"""A bound against hanging, not a speed test: learning reads 80 synthetic trays."""


def test_corrections_keep_the_newest_and_drop_the_oldest(tmp_path: Path) -> None:
    corrections = Corrections(tmp_path / "c", keep=3)
    frame = np.zeros((48, 64, 3), np.uint8)
    read = Reading((), (Unreadable((0.1, 0.1, 0.2, 0.2), "blurred"),))
    final = Reading((DieRead("d6", 4, (0.1, 0.1, 0.2, 0.2), 1.0),))
    for n in range(5):
        corrections.keep_correction(f"r-{n}", frame, read, final)
    assert list(corrections.labels()) == ["r-2.png", "r-3.png", "r-4.png"]
    assert sorted(p.name for p in corrections.folder.glob("*.png")) == list(corrections.labels())
    corrections.labels_path.write_text("{broken")  # a damaged file: start afresh, keep going
    corrections.keep_correction("r-5", frame, read, final)
    assert list(corrections.labels()) == ["r-5.png"]


@pytest.mark.slow
def test_learning_from_corrections_is_checked_adopted_and_rolled_back(tmp_path: Path) -> None:
    look = NumeralLook(
        body=(60, 150, 40),
        ink=(20, 20, 20),
        font=cv2.FONT_HERSHEY_TRIPLEX,
        stroke=0.14,
        marker="dot",
    )  # a table's own green d20
    spec = TraySpec(size=(640, 480), side=(0.055, 0.07), floors=("dark",), look=look)
    corrections = Corrections(tmp_path / "corrections")
    for seed in range(6_200_000, 6_200_025):  # the GM entered every d20 of 25 throws
        tray = render_tray(seed, spec, dice=("d20", "d20"))
        final = Reading(tuple(DieRead("d20", d.value, d.box, 1.0) for d in tray.dice))
        corrections.keep_correction(f"r-{seed}", tray.image, Reading(), final)
    profile = tmp_path / "dice"
    learned = learn_from_corrections(corrections, profile, ReaderSettings())
    assert (learned.taught, learned.checked) == (20, 5)
    assert learned.adopted and learned.after >= learned.before  # no worse on the 5 set aside
    assert set(load_profile(profile).taught()) <= {f"d20:{v}" for v in range(1, 21)}
    rollback(profile)  # back to the empty profile there was before: reads as none
    assert load_profile(profile).taught() == {}
    assert load_profile(previous_of(profile)).taught()  # the learned one, to redo
    with pytest.raises(TeachError, match="at least 5"):
        learn_from_corrections(Corrections(tmp_path / "none"), profile, ReaderSettings())


@pytest.mark.slow
def test_a_profile_that_reads_worse_is_refused_and_the_old_one_stays(tmp_path: Path) -> None:
    spec = TraySpec(size=(640, 480), side=(0.055, 0.07), floors=("dark",))
    tray = render_tray(6_300_000, spec, dice=("d6",))
    (die,) = tray.dice
    assert [d.value for d in read_dice(tray.image).dice] == [die.value]  # read right today
    corrections = Corrections(tmp_path / "corrections")
    learner = Learner(corrections, tmp_path / "dice", ReaderSettings, lambda _: None)
    with pytest.raises(ValueError, match="0 corrections kept: at least 5"):
        learner.learn()
    for n in range(5):  # the GM typed the wrong face four times; the fifth, set aside, is right
        value = die.value if n == 4 else die.value % 6 + 1
        final = Reading((DieRead("d6", value, die.box, 1.0),))
        corrections.keep_correction(f"r-{n}", tray.image, Reading(), final)
    adopted: list[Path] = []
    learner = Learner(corrections, tmp_path / "dice", ReaderSettings, adopted.append)
    seen: list[LearnStatus] = []
    learner.on_status.append(seen.append)
    assert learner.learn() == 5
    with pytest.raises(ValueError, match="learning already"):
        learner.learn()
    assert learner.wait(LEARNING)
    assert adopted == [] and not (tmp_path / "dice").exists()  # nothing written
    # refused either by the example set aside (read right without, wrong with) or, before
    # that, by teach's own check that other dice read no worse (pip d6 are in its trays)
    status = learner.status
    assert [s.state for s in seen] == ["learning", status.state]
    if status.state == "kept":
        done = status.learned
        assert done is not None and not done.adopted
        assert (done.before, done.after) == (1.0, 0.0)
        assert status.to_dict()["after"] == 0.0
    else:
        assert status.state == "failed" and "refused" in str(status.to_dict())


def _camera_roll(tower: Tower) -> None:
    """Throw three pip d6 and run the loop until the roll counts."""
    tower.camera.throw(3)
    for _ in range(60):
        if tower.loop.step() is TowerState.RESULT:
            return
    raise AssertionError(f"no result: the tower is {tower.loop.state}")


def _wrong_first(tower: Tower) -> None:
    """Have the loop's reader misread die 0 of the next tray once, as a real reader can."""
    honest = tower.loop.reader
    calls = iter(range(1_000))

    def reader(frame: np.ndarray) -> Reading:
        reading = honest(frame)
        if next(calls) or not reading.dice:
            return reading
        wrong = replace(reading.dice[0], value=reading.dice[0].value % 6 + 1)
        return replace(reading, dice=(wrong, *reading.dice[1:]))

    tower.loop.reader = reader


def _labelled(tower: Tower, roll_id: str) -> list[tuple[str, int]]:
    """Return the dice a kept correction is labelled with."""
    assert tower.loop.corrections is not None
    return sorted(
        (kind, value)
        for kind, value, _ in parse_labels(tower.loop.corrections.labels(), f"{roll_id}.png")
    )


def test_a_reread_that_changes_the_roll_is_kept_as_a_correction(tmp_path: Path) -> None:
    config = sim_config(tmp_path / "s.db")
    with Tower(config, simulated_parts(config, 41)) as tower:
        _wrong_first(tower)
        _camera_roll(tower)
        misread = tower.table.state.history[-1]
        tower.loop.reread()  # the GM sees a wrong face and has the tray read again
        tower.loop.step()
        (record,) = tower.table.state.history  # the re-read replaced the misread roll
        assert record.id != misread.id and record.roll.dice != misread.roll.dice
        assert tower.loop.corrections is not None
        assert list(tower.loop.corrections.labels()) == [f"{record.id}.png"]
        assert _labelled(tower, record.id) == sorted(("d6", d.face) for d in record.roll.dice)


def test_an_undo_then_the_throw_typed_in_is_kept_with_the_cameras_boxes(tmp_path: Path) -> None:
    config = sim_config(tmp_path / "s.db")
    with Tower(config, simulated_parts(config, 42)) as tower:
        _wrong_first(tower)
        _camera_roll(tower)
        truth = sorted(("d6", d.value) for d in tower.camera.dice)
        tower.table.undo()  # cmd/undo, then cmd/roll with the faces the GM sees
        typed = tower.table.record(Roll(tuple(Die(DieKind.D6, v) for _, v in truth)))
        assert _labelled(tower, typed.id) == truth
        assert tower.loop.corrections is not None
        (label,) = tower.loop.corrections.labels().values()
        assert all(len(d["box"]) == 4 for d in label["dice"])  # on the camera's boxes
        tower.table.undo()  # an undo, and the same faces typed again: nothing new to learn
        tower.table.record(Roll(tuple(Die(DieKind.D6, v) for _, v in truth)))
        assert len(tower.loop.corrections) == 1


def test_typed_faces_go_on_the_cameras_boxes_only_where_that_is_plain() -> None:
    box = (0.1, 0.1, 0.2, 0.2)
    read = Reading(tuple(DieRead("d6", v, box, 0.9) for v in (2, 5, 5)))
    one = by_hand(read, [("d6", 5), ("d6", 2), ("d6", 6)])
    assert one is not None and sorted(d.value for d in one.dice) == [2, 5, 6]
    assert by_hand(read, [("d6", 1), ("d6", 2), ("d6", 6)]) is None  # two changed: which?
    assert by_hand(read, [("d6", 5), ("d6", 2)]) is None  # a die fewer than the camera saw
    d10 = by_hand(Reading((DieRead("d10", 3, box, 0.9),)), [("d10", 10)])
    assert d10 is not None and d10.dice[0].value == 0  # the rules' 10 is the die's 0


@pytest.mark.slow
def test_a_tower_stopped_while_it_learns_lets_the_learning_end_first(tmp_path: Path) -> None:
    """Found by the fuzz suite: SIGTERM after a `learn` aborted the process ("terminate
    called without an active exception") as it exited under the learning thread."""
    config = sim_config(tmp_path / "s.db")
    tower = Tower(config, simulated_parts(config, 43))
    assert tower.loop.corrections is not None and tower.learner is not None
    spec = TraySpec(size=(320, 240), side=(0.1, 0.12), floors=("dark",))
    for seed in range(5):
        tray = render_tray(7_100_000 + seed, spec, dice=("d20",))
        final = Reading(tuple(DieRead("d20", d.value, d.box, 1.0) for d in tray.dice))
        tower.loop.corrections.keep_correction(f"r-{seed}", tray.image, Reading(), final)
    assert tower.learner.learn() == 5
    tower.close()
    assert tower.learner.status.state in ("adopted", "kept", "failed")
