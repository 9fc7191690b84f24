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

from tidetower.vision.kinds import check_face
from tidetower.vision.read import ImageError, load_image, read_dice


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


@pytest.mark.parametrize("shape", [(0, 0, 3), (1, 1, 3), (1, 1), (0,), (5, 5, 3), (640, 2, 3)])
def test_degenerate_arrays_read_empty(shape: tuple[int, ...]) -> None:
    reading = read_dice(np.zeros(shape, np.uint8))
    assert reading.dice == () and reading.unreadable == ()


def test_one_pixel_png_reads_empty(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "dot.png"), np.zeros((1, 1, 3), np.uint8))
    assert read_dice(load_image(tmp_path / "dot.png")).dice == ()


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
    for die in reading.dice:
        check_face(die.die, die.value)  # a face its kind has, whatever the noise
        assert 0 <= die.confidence <= 1
