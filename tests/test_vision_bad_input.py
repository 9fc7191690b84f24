"""Bad input gets a clear error or an empty result: never a crash or a hang."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tidetower.vision.d6.find import MIN_DIE_PX
from tidetower.vision.kinds import check_face
from tidetower.vision.read import WHOLE_FRAME, ImageError, load_image, read_dice, refusal
from tidetower.vision.settings import ReaderSettings


def test_missing_file_is_an_image_error(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match="cannot read"):
        load_image(tmp_path / "nope.jpg")


def test_empty_file_is_an_image_error(tmp_path: Path) -> None:
    (tmp_path / "empty.png").write_bytes(b"")
    with pytest.raises(ImageError, match="empty"):
        load_image(tmp_path / "empty.png")


def test_non_image_is_an_image_error(tmp_path: Path) -> None:
    (tmp_path / "notes.png").write_text("these are not pixels\n" * 20)
    with pytest.raises(ImageError, match="not an image"):
        load_image(tmp_path / "notes.png")


def test_directory_is_an_image_error(tmp_path: Path) -> None:
    with pytest.raises(ImageError):
        load_image(tmp_path)


def test_a_pipe_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "tray.jpg"
    os.mkfifo(fifo)  # reading it would block until someone writes: it must not be opened
    refused: list[str] = []

    def read() -> None:
        with pytest.raises(ImageError, match="not a regular file") as error:
            load_image(fifo)
        refused.append(str(error.value))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(30)  # a guard so a regression fails here instead of hanging the suite
    assert refused, "load_image blocked on the pipe (or raised something else)"


def test_truncated_jpeg_does_not_crash(tmp_path: Path) -> None:
    ok, data = cv2.imencode(".jpg", np.full((64, 64, 3), 128, np.uint8))
    assert ok
    (tmp_path / "cut.jpg").write_bytes(data.tobytes()[:40])
    with pytest.raises(ImageError):
        load_image(tmp_path / "cut.jpg")


@pytest.mark.parametrize(
    ("shape", "why"),
    [
        ((0, 0, 3), "0x0 px, too small"),
        ((1, 1, 3), "1x1 px, too small"),
        ((1, 1), "1x1 px, too small"),
        ((5, 5, 3), "5x5 px, too small"),
        ((640, 2, 3), "2x640 px, too small"),
        ((0,), "not a picture"),
        ((20, 20, 2), "not a picture"),
    ],
)
def test_degenerate_arrays_are_one_unreadable_whole_saying_why(
    shape: tuple[int, ...], why: str
) -> None:
    reading = read_dice(np.zeros(shape, np.uint8))
    assert reading.dice == ()
    [whole] = reading.unreadable
    assert whole.box == WHOLE_FRAME and why in whole.reason


def test_one_pixel_png_is_too_small_to_hold_a_die(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "dot.png"), np.zeros((1, 1, 3), np.uint8))
    [whole] = read_dice(load_image(tmp_path / "dot.png")).unreadable
    assert whole.reason == (
        f"the picture is 1x1 px, too small to hold a die: the reader needs a die at least "
        f"{MIN_DIE_PX} px across, so a picture at least {MIN_DIE_PX}x{MIN_DIE_PX} px"
    )


@pytest.mark.parametrize("short", [MIN_DIE_PX - 1, MIN_DIE_PX])
def test_the_least_picture_is_the_smallest_die_the_reader_reads(short: int) -> None:
    assert (refusal(np.zeros((short, 40, 3), np.uint8), 640) is None) == (short >= MIN_DIE_PX)


def test_a_strip_too_narrow_at_the_work_size_says_how_wide_it_must_be() -> None:
    # 60 px across is room for a die, but read at 640 px long the strip is 9.6 px across
    strip = np.full((60, 4000, 3), 128, np.uint8)
    reason = refusal(strip, ReaderSettings().work_size)
    assert reason is not None and "too narrow" in reason and "needs 100 px across" in reason
    assert refusal(np.full((100, 4000, 3), 128, np.uint8), 640) is None
    [whole] = read_dice(strip).unreadable
    assert whole.reason == reason


def test_huge_image_is_downscaled_not_hung() -> None:
    huge = np.full((12000, 12000, 3), 180, np.uint8)
    reading = read_dice(huge)  # read at the work size (benchmarks time it), not at 12000
    assert reading.dice == () and reading.unreadable == ()


@settings(max_examples=25, deadline=None)
@given(
    hnp.arrays(
        st.sampled_from([np.uint8, np.uint16, np.float32, np.int32]),
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=48),
    )
)
def test_any_array_reads_without_crashing(image: np.ndarray) -> None:
    reading = read_dice(image)
    assert reading.ms >= 0
    for unread in reading.unreadable:
        assert unread.reason and all(0 <= v <= 1 for v in unread.box)
    for die in reading.dice:
        check_face(die.die, die.value)  # a face its kind has, whatever the noise
        assert 0 <= die.confidence <= 1
