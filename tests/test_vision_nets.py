"""The shipped nets: an ensemble of face readers averaged, and one candidate per die."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tidetower.vision.d6 import nets
from tidetower.vision.d6.find import (
    Candidate,
    find_dice,
    heatmap,
    mirrored_input,
    peaks,
    refine,
    suppress,
)
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import TraySpec, render_tray


def _softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return np.asarray(e / e.sum(axis=1, keepdims=True))


def test_face_readers_are_an_ensemble_whose_answers_are_averaged() -> None:
    models = nets.face_models()
    assert len(models) >= 2
    tray = render_tray(11)
    h, w = tray.image.shape[:2]
    crops = []
    for die in tray.dice[:4]:
        x0, y0, x1, y1 = die.box
        cx, cy, side = (x0 + x1) / 2 * w, (y0 + y1) / 2 * h, (x1 - x0) * w
        crops.append(nets.face_crop(tray.image, cx, cy, side))
    blob = nets.to_blob(np.stack(crops))
    each = [_softmax(nets.logits_of(m, blob).astype(np.float64)) for m in models]
    together = nets.run_faces(np.stack(crops))
    assert np.allclose(together, np.mean(each, axis=0), atol=1e-5)
    assert np.allclose(together.sum(axis=1), 1.0, atol=1e-5)
    # the readers differ (else the ensemble buys nothing), yet agree on these clear dice
    assert not np.allclose(each[0], each[1], atol=1e-4)
    values = [d.value for d in tray.dice[:4]]
    assert [int(np.argmax(p[1:])) + 1 for p in together] == values


def test_same_die_setting_reaches_the_suppression() -> None:
    work = np.asarray(render_tray(12).image)
    every_peak = find_dice(work, ReaderSettings(same_die=0.0))
    one_per_die = find_dice(work, ReaderSettings())
    merged = find_dice(work, ReaderSettings(same_die=3.0))
    assert len(every_peak) >= len(one_per_die) > len(merged) >= 1


def test_the_mirrored_finder_puts_each_peak_on_the_same_cell() -> None:
    work = np.asarray(render_tray(13, TraySpec(count=(15, 15))).image)
    square, _ = nets.letterbox(work, nets.find_size())
    plain = nets.run_finder(square)[0]
    mirrored = nets.run_finder(mirrored_input(square))[0][:, ::-1]
    shifts = [
        refine(mirrored, row, col)[0] - refine(plain, row, col)[0] for row, col in peaks(plain, 0.3)
    ]
    assert len(shifts) >= 12
    # mirrored without the shift, peaks land about half a cell off
    assert abs(float(np.median(shifts))) < 0.15, shifts
    averaged = heatmap(work, mirrored=True)[0]
    assert np.allclose(averaged, (plain + mirrored) / 2, atol=1e-6)
    # the setting reaches the finder: with it off, candidates carry the plain heat
    plain_heat = {round(c.heat, 4) for c in find_dice(work, ReaderSettings(find_mirrored=False))}
    both_heat = {round(c.heat, 4) for c in find_dice(work, ReaderSettings())}
    assert plain_heat <= {round(float(plain[r, c]), 4) for r, c in peaks(plain, 0.0)}
    assert plain_heat != both_heat


def test_face_readers_that_disagree_on_input_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("d6_faces_1.onnx", "d6_finder.onnx"):
        (tmp_path / name).symlink_to(nets.MODELS / name)
    (tmp_path / "d6_faces_2.onnx").symlink_to(nets.MODELS / "d6_finder.onnx")  # wrong input
    monkeypatch.setattr(nets, "MODELS", tmp_path)
    with pytest.raises(ValueError, match="different inputs"):
        nets.face_models()


def test_a_faint_peak_inside_a_big_die_is_not_a_second_die() -> None:
    big = Candidate(100.0, 100.0, 72.0, 0.9)
    inside = Candidate(120.0, 115.0, 34.0, 0.4)  # off-centre, within the big die's half side
    touching = Candidate(100.0, 172.0, 70.0, 0.8)  # the next die: one side away
    assert suppress([inside, touching, big]) == [big, touching]


def test_a_die_leaning_on_its_neighbour_is_a_second_die() -> None:
    die = Candidate(100.0, 100.0, 40.0, 0.8)
    leaning = Candidate(100.0, 117.0, 40.0, 0.55)  # 0.42 sides away, as hot and as big
    faint = Candidate(100.0, 117.0, 40.0, 0.3)  # the same place, but a faint echo
    side_face = Candidate(100.0, 117.0, 22.0, 0.6)  # hot, but a side face's size
    # warm and 0.85 of its neighbour's size: how leaning dice in photos the finder never saw
    # looked (heat 0.45 to 0.49)
    unseen = Candidate(100.0, 117.0, 34.0, 0.45)
    assert suppress([die, leaning]) == [die, leaning]
    assert suppress([die, unseen]) == [die, unseen]
    assert suppress([die, faint]) == [die]
    assert suppress([die, side_face]) == [die]
    assert suppress([die, leaning], ReaderSettings(leaning_heat=0.9)) == [die]


def test_a_close_peak_much_bigger_or_too_close_is_not_a_leaning_die() -> None:
    die = Candidate(100.0, 100.0, 40.0, 0.8)
    bigger = Candidate(100.0, 130.0, 80.0, 0.6)  # 0.375 of the larger side, twice the size
    too_close = Candidate(100.0, 112.0, 40.0, 0.7)  # hot and alike, but 0.3 sides away
    assert suppress([die, bigger]) == [die]
    assert suppress([die, too_close]) == [die]


def test_asking_for_readers_the_package_does_not_have_is_an_error() -> None:
    crops = np.zeros((1, nets.face_size(), nets.face_size(), 3), np.uint8)
    for readers in (-1, len(nets.face_models()) + 1):
        with pytest.raises(ValueError, match="face readers"):
            nets.run_faces(crops, readers)
