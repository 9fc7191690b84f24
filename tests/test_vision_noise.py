"""A picture of pure noise holds no dice: the finders see dots in it, the reader must not."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tidetower.vision.cli import read_command
from tidetower.vision.d6.find import Candidate
from tidetower.vision.read import read_dice, to_work_size
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.structure import Detail, structure
from tidetower.vision.synth import NOISE_KINDS, TraySpec, noise_picture, render_tray

SIZES = ((16, 16), (48, 64), (64, 64), (200, 300), (480, 640), (972, 1296), (1080, 1920))
"""Pictures smaller than the work size are enlarged to it, larger ones shrunk."""
AS_THE_CLI_READS = ReaderSettings(close_up=True)
"""`tidetower read` also tries a picture where nothing is found as a close-up of one die."""


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(NOISE_KINDS), st.sampled_from(SIZES), st.integers(0, 2**32 - 1))
def test_pure_noise_reads_as_no_dice(kind: str, size: tuple[int, int], seed: int) -> None:
    reading = read_dice(noise_picture(kind, size, seed), settings=AS_THE_CLI_READS)
    assert reading.dice == () and reading.unreadable == ()


@pytest.mark.parametrize("kind", NOISE_KINDS)
def test_the_finders_see_dice_in_noise_that_the_structure_test_drops(kind: str) -> None:
    picture = noise_picture(kind, (480, 640), 2026)
    unguarded = read_dice(picture, settings=ReaderSettings(close_up=True, min_structure=0.0))
    assert unguarded.dice or unguarded.unreadable  # what the noise test above guards against
    guarded = read_dice(picture, settings=AS_THE_CLI_READS)
    assert guarded.dice == () and guarded.unreadable == ()


def test_tidetower_read_says_no_dice_in_noise(tmp_path: Path) -> None:
    path = tmp_path / "noise.png"
    cv2.imwrite(str(path), noise_picture("uniform", (480, 640), 17))
    result = CliRunner().invoke(read_command, [str(path)])
    assert result.exit_code == 0, result.output
    assert f"{path}: no dice (" in result.stdout


def _middle(picture: np.ndarray, side: float) -> float:
    """Return the structure of a die-sized candidate in the middle of a picture."""
    work = to_work_size(picture, ReaderSettings().work_size)
    h, w = work.shape[:2]
    return structure(Detail.of(picture, work), Candidate(w / 2, h / 2, side, 1.0))


@pytest.mark.parametrize("kind", NOISE_KINDS)
@pytest.mark.parametrize("size", [(48, 64), (480, 640), (1080, 1920)])
def test_noise_measures_about_as_white_noise_does(kind: str, size: tuple[int, int]) -> None:
    measured = [_middle(noise_picture(kind, size, seed), 40.0) for seed in range(10)]
    assert 0.5 < float(np.median(measured)) < 2.0
    assert max(measured) < ReaderSettings().min_structure


@pytest.mark.parametrize("sensor_noise", [0.0, 4.0, 12.0])
def test_every_rendered_die_stands_far_above_noise(sensor_noise: float) -> None:
    spec = TraySpec(size=(640, 480), noise=sensor_noise)
    for seed in range(3):
        tray = render_tray(5_500_000 + seed, spec)
        detail = Detail.of(tray.image, tray.image)
        for die in tray.dice:
            x0, y0, x1, y1 = (v * s for v, s in zip(die.box, (640, 480, 640, 480), strict=True))
            found = Candidate((x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0 + y1 - y0) / 2, 1.0)
            assert structure(detail, found) > 4 * ReaderSettings().min_structure
