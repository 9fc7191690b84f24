"""Taught profiles survive any kill, a full disk and a damaged file (issue 26, findings 9,
10, 16): at every instant a complete profile and its previous exist, rollback works from
whatever a kill left, learning reads its own copy of the corrections and stops when asked."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tidetower.engine.tray import DieRead, Reading
from tidetower.firmware.corrections import Corrections
from tidetower.firmware.learn import Learner, learn_from_corrections
from tidetower.firmware.profiles import adopt, rollback, versions_of
from tidetower.firmware.sim import sim_config, simulated_parts
from tidetower.firmware.tower import Tower
from tidetower.vision.numerals.nets import embedding_width
from tidetower.vision.numerals.profile import EXAMPLES, Profile, load_profile, previous_of
from tidetower.vision.progress import quietly
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import TraySpec, render_tray

LEARNING = 600.0
"""A bound against hanging, not a speed test."""


def _profile(folder: Path, face: int) -> Path:
    """A small profile that has taught one d20 face, to tell versions apart."""
    width = embedding_width()
    vector = np.zeros((1, width), np.float32)
    vector[0, face % width] = 1.0
    Profile(vector, (f"d20:{face}",), {}).save(folder, 1)
    return folder


def _taught(profile: Path) -> set[str]:
    return set(load_profile(profile).taught())


class Killed(BaseException):
    """Stands for kill -9 at one step: nothing after it runs, no cleanup either."""


def _kill_at(monkeypatch: pytest.MonkeyPatch, step: int) -> None:
    """The `step`-th rename, link or copy of the swap is where the process dies."""
    done = [0]

    def dying(real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            done[0] += 1
            if done[0] == step:
                raise Killed
            return real(*args, **kwargs)

        return call

    for name in ("replace", "rename", "symlink"):
        monkeypatch.setattr(os, name, dying(getattr(os, name)))
    monkeypatch.setattr(shutil, "copytree", dying(shutil.copytree))
    monkeypatch.setattr(Path, "rename", dying(Path.rename))


@pytest.mark.parametrize("step", range(1, 12))
def test_a_kill_at_any_step_of_a_swap_leaves_a_profile_and_its_previous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: int
) -> None:
    profile = tmp_path / "dice"
    _profile(profile, 3)  # taught in place, as `tidetower teach PROFILE` does
    adopt(_profile(tmp_path / "first", 5), profile)
    with monkeypatch.context() as patch:
        _kill_at(patch, step)
        with contextlib.suppress(Killed):
            adopt(_profile(tmp_path / "second", 7), profile)
    assert _taught(profile) in ({"d20:5"}, {"d20:7"})  # the old one or the new, whole
    assert _taught(previous_of(profile)) in ({"d20:3"}, {"d20:5"})
    rollback(profile)
    rollback(profile)  # and back again: nothing was lost on the way
    assert _taught(profile) in ({"d20:5"}, {"d20:7"})


@pytest.mark.parametrize("step", range(1, 5))
def test_a_kill_during_rollback_then_another_rollback_loses_no_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: int
) -> None:
    profile = tmp_path / "dice"
    adopt(_profile(tmp_path / "a", 1), profile)
    adopt(_profile(tmp_path / "b", 2), profile)
    with monkeypatch.context() as patch:
        _kill_at(patch, step)
        with contextlib.suppress(Killed):
            rollback(profile)
    rollback(profile)
    versions = {frozenset(_taught(v)) for v in versions_of(profile).iterdir() if v.name.isdigit()}
    assert frozenset({"d20:2"}) in versions  # the newest is never deleted
    assert _taught(profile) | _taught(previous_of(profile)) <= {"d20:1", "d20:2"}


def test_a_full_disk_during_a_swap_leaves_the_profile_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = tmp_path / "dice"
    adopt(_profile(tmp_path / "a", 1), profile)

    def full(*_args: Any, **_kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(shutil, "copytree", full)
    with pytest.raises(OSError, match="No space left"):
        adopt(_profile(tmp_path / "b", 2), profile)
    assert _taught(profile) == {"d20:1"}


def test_a_damaged_profile_is_reported_and_the_previous_one_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    profile = tmp_path / "dice"
    adopt(_profile(tmp_path / "a", 1), profile)
    adopt(_profile(tmp_path / "b", 2), profile)
    examples = profile / EXAMPLES
    examples.write_bytes(examples.read_bytes()[:100])  # a disk that filled mid-write
    with caplog.at_level(logging.WARNING):
        assert _taught(profile) == {"d20:1"}
    assert "reading with the previous profile" in caplog.text
    assert ReaderSettings(profile=str(profile)).profile == str(profile)  # a config starts
    rollback(profile)
    assert _taught(profile) == {"d20:1"}


def test_a_plain_file_where_the_previous_belongs_is_set_aside(tmp_path: Path) -> None:
    profile = tmp_path / "dice"
    adopt(_profile(tmp_path / "a", 1), profile)
    previous_of(profile).unlink()
    previous_of(profile).write_text("not a profile")
    adopt(_profile(tmp_path / "b", 2), profile)
    assert _taught(profile) == {"d20:2"} and _taught(previous_of(profile)) == {"d20:1"}


def _d20_corrections(folder: Path, count: int) -> Corrections:
    corrections = Corrections(folder, keep=count)
    spec = TraySpec(size=(320, 240), side=(0.1, 0.12), floors=("dark",))
    for seed in range(count):
        tray = render_tray(7_200_000 + seed, spec, dice=("d20",))
        final = Reading(tuple(DieRead("d20", d.value, d.box, 1.0) for d in tray.dice))
        corrections.keep_correction(f"r-{seed}", tray.image, Reading(), final)
    return corrections


@pytest.mark.slow
def test_corrections_pruned_while_learning_reads_them_take_nothing_from_it(
    tmp_path: Path,
) -> None:
    corrections = _d20_corrections(tmp_path / "c", 6)
    frame = np.zeros((48, 64, 3), np.uint8)
    pruned = []

    def pruning_along(items: Any, label: str, length: int | None = None) -> Any:
        if not pruned:  # the table keeps six more as learning starts: the oldest go
            for n in range(6):
                corrections.keep_correction(f"n-{n}", frame, Reading(), Reading())
            pruned.append(sorted(p.name for p in corrections.folder.glob("r-*.png")))
        return quietly(items, label, length)

    learned = learn_from_corrections(
        corrections, tmp_path / "dice", ReaderSettings(), None, pruning_along
    )
    assert pruned == [[]] and (learned.taught, learned.checked) == (5, 1)


def test_learning_stops_when_asked_and_leaves_no_folder(tmp_path: Path) -> None:
    corrections = _d20_corrections(tmp_path / "c", 6)
    profile = tmp_path / "dice"
    (versions_of(profile) / "learn-999").mkdir(parents=True)  # a learning killed earlier
    adopted: list[Path] = []
    learner = Learner(corrections, profile, ReaderSettings, adopted.append)
    learner.learn()
    assert learner.stop(LEARNING)
    assert learner.status.state == "failed" and "learning stopped" in learner.status.message
    assert adopted == [] and not list(versions_of(profile).glob("learn-*"))


def test_a_profile_learned_without_one_configured_is_read_after_a_restart(tmp_path: Path) -> None:
    config = sim_config(tmp_path / "s.db")
    assert config.camera.reader.profile is None
    with Tower(config, simulated_parts(config, 44)) as tower:
        assert tower.learner is not None
        home = tower.learner.profile
    adopt(_profile(tmp_path / "learned", 9), home)  # what a learning there adopted
    config = sim_config(tmp_path / "s.db")
    with Tower(config, simulated_parts(config, 45)):
        assert config.camera.reader.profile == str(home)
