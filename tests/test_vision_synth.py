"""Synthetic trays are seeded and labelled, and the reader reads them."""

from __future__ import annotations

import numpy as np
import pytest

from tidetower.vision.read import Calibration, read_dice
from tidetower.vision.score import Label, score
from tidetower.vision.synth import FACE_PAINTERS, TraySpec, render_tray

TEST_SEED = 2_000_000
"""Seeds for these tests; the nets trained on seeds 10000..10299 only."""


def test_same_seed_same_tray() -> None:
    a, b = render_tray(3), render_tray(3)
    assert np.array_equal(a.image, b.image) and a.dice == b.dice
    assert not np.array_equal(a.image, render_tray(4).image)


def test_trays_vary_within_spec() -> None:
    counts = []
    for seed in range(30):
        tray = render_tray(seed, TraySpec(size=(480, 360)))
        assert tray.image.shape == (360, 480, 3) and tray.image.dtype == np.uint8
        counts.append(len(tray.dice))
        for die in tray.dice:
            assert die.die == "d6" and 1 <= die.value <= 6
            x0, y0, x1, y1 = die.box
            assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1
    assert min(counts) >= 1 and max(counts) <= 25 and len(set(counts)) > 5


def test_numeral_dice_have_a_hook() -> None:
    assert "d6" in FACE_PAINTERS


@pytest.mark.slow
def test_reader_reads_200_synthetic_trays() -> None:
    labelled = right = wrong = extra = 0
    for seed in range(TEST_SEED, TEST_SEED + 200):
        tray = render_tray(seed)
        labels = tuple(Label(d.value, d.box) for d in tray.dice)
        s = score(read_dice(tray.image), labels)
        labelled, right = labelled + s.labelled, right + s.right
        wrong, extra = wrong + s.wrong_value, extra + s.false_positives
    assert labelled > 1000
    assert right / labelled >= 0.99, (right, wrong, labelled)
    # since the renderer draws perspective (side faces with pips) a big die's side face is
    # now and then read as a die of its own: 4 to 6 in 200 trays (0.2 % of dice) measured
    assert extra <= 8, extra


def _right(tray_seed: int, spec: TraySpec) -> tuple[int, int, int]:
    """Read one synthetic tray; return (labelled, right, false positives)."""
    tray = render_tray(tray_seed, spec)
    labels = tuple(Label(d.value, d.box) for d in tray.dice)
    s = score(read_dice(tray.image), labels)
    return s.labelled, s.right, s.false_positives


@pytest.mark.slow
def test_reads_small_and_large_photos_alike() -> None:
    # the known weak spot (vision.md, limits): a big die's pip, crisp in a photo shrunk
    # from 2000 px, now and then read as a die showing 1; 4 or 5 in these 30 trays
    most_extra = {(480, 480): 3, (1280, 960): 3, (2000, 2000): 6}
    for size, allowed in most_extra.items():
        labelled = right = extra = 0
        for seed in range(TEST_SEED, TEST_SEED + 30):  # 300+ dice: one miss is not 1 %
            n, r, fp = _right(seed, TraySpec(size=size))
            labelled, right, extra = labelled + n, right + r, extra + fp
        assert right / labelled >= 0.98, size
        assert extra <= allowed, size


def test_calibration_tray_region_and_background() -> None:
    seed = TEST_SEED + 7
    tray = render_tray(seed)
    empty = render_tray(seed, TraySpec(count=(0, 0)))
    assert empty.dice == ()
    full = read_dice(tray.image, Calibration(background=empty.image))
    assert sorted(d.value for d in full.dice) == sorted(d.value for d in tray.dice)
    left = read_dice(tray.image, Calibration(tray=(0.0, 0.0, 0.5, 1.0)))
    inside = [d for d in tray.dice if (d.box[0] + d.box[2]) / 2 < 0.5]
    assert len(left.dice) + len(left.unreadable) == len(inside)
