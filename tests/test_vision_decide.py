"""The decision step: a second look only for unsure dice, and it never touches sure ones."""

from __future__ import annotations

import numpy as np
import pytest

from tidetower.vision.d6 import decide as dec
from tidetower.vision.d6 import nets
from tidetower.vision.d6.find import Candidate
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import render_tray


def _calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count how many candidates each face_probabilities call reads."""
    seen: list[int] = []
    real = dec.face_probabilities

    def spy(
        work: np.ndarray,
        candidates: list[Candidate],
        views: tuple[dec.View, ...] = dec.TURNS,
        readers: int = 0,
    ) -> np.ndarray:
        seen.append(len(candidates))
        return real(work, candidates, views, readers)

    monkeypatch.setattr(dec, "face_probabilities", spy)
    return seen


def test_second_look_reads_only_unsure_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    work = np.asarray(render_tray(7).image)
    cands = [Candidate(100.0, 100.0, 40.0, 0.9), Candidate(300.0, 300.0, 40.0, 0.9)]
    settings = ReaderSettings(second_look=True)
    sure = np.array([[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0]])
    seen = _calls(monkeypatch)
    out = dec.look_again(work, cands, sure.astype(np.float32), settings)
    assert seen == [1]  # only the die torn between 1 and 2 is read again
    assert np.array_equal(out[0], sure[0])
    assert out.shape == (2, 7) and np.allclose(out.sum(axis=1), 1.0, atol=1e-4)


def test_second_look_skips_when_everything_is_sure(monkeypatch: pytest.MonkeyPatch) -> None:
    work = np.asarray(render_tray(7).image)
    probs = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]], np.float32)
    seen = _calls(monkeypatch)
    out = dec.look_again(work, [Candidate(50.0, 50.0, 30.0, 1.0)], probs, ReaderSettings())
    assert seen == [] and np.array_equal(out, probs)


def test_second_look_skips_what_is_surely_no_die(monkeypatch: pytest.MonkeyPatch) -> None:
    work = np.asarray(render_tray(7).image)
    probs = np.array([[0.95, 0.01, 0.01, 0.01, 0.01, 0.005, 0.005]], np.float32)
    seen = _calls(monkeypatch)
    dec.look_again(work, [Candidate(50.0, 50.0, 30.0, 1.0)], probs, ReaderSettings())
    assert seen == []


def test_the_third_reader_is_asked_only_about_unsure_dice(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[int] = []
    real = dec.run_faces

    def spy(crops: np.ndarray, readers: int = 0) -> np.ndarray:
        asked.append(readers)
        return real(crops, readers)

    monkeypatch.setattr(dec, "run_faces", spy)
    tray = render_tray(7)
    work = np.asarray(tray.image)
    h, w = work.shape[:2]
    x0, y0, x1, y1 = tray.dice[0].box
    sure = Candidate((x0 + x1) / 2 * w, (y0 + y1) / 2 * h, (x1 - x0) * w, 0.9)
    dec.decide(work, [sure], ReaderSettings(second_look_below=0.0))
    assert asked == [2]  # the first look: two readers
    asked.clear()
    dec.decide(work, [sure], ReaderSettings(second_look_below=1.01))  # everything is unsure
    assert asked == [2, 0]  # then every reader, the third too


def test_the_first_look_averages_the_first_two_readers_only() -> None:
    tray = render_tray(11)
    die = tray.dice[0]
    h, w = tray.image.shape[:2]
    x0, y0, x1, y1 = die.box
    crop = nets.face_crop(tray.image, (x0 + x1) / 2 * w, (y0 + y1) / 2 * h, (x1 - x0) * w)
    crops = np.stack([crop])
    models = nets.face_models()
    assert len(models) == 3
    logits = nets.logits_of(models[2], nets.to_blob(crops)).astype(np.float64)
    third = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    pair, every = nets.run_faces(crops, 2), nets.run_faces(crops)
    assert np.allclose(every, (pair * 2 + third) / 3, atol=1e-5)
    assert not np.allclose(pair, every, atol=1e-6)
