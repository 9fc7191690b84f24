"""Frame sources and calibration: replayed frames drive the real read loop."""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from tidetower.engine.table import Table
from tidetower.engine.tray import TowerState
from tidetower.firmware.cli import main
from tidetower.firmware.config import PinsConfig
from tidetower.firmware.devices import TowerDevices
from tidetower.firmware.readloop import ReadLoop
from tidetower.vision.calibrate import find_tray, load_calibration, save_calibration
from tidetower.vision.read import read_dice
from tidetower.vision.settle import SettleWatch
from tidetower.vision.sources import FrameSourceError, SourceExhausted
from tidetower.vision.sources.replay import ReplaySource
from tidetower.vision.sources.simulated import SimulatedSource

ROOT = Path(__file__).resolve().parents[1]


def _recorded_throw(seed: int = 3) -> tuple[list[np.ndarray], list[int]]:
    """Frames a camera saw of one throw: empty tray, dice tumbling, dice at rest."""
    source = SimulatedSource(seed)
    frames = [source.read() for _ in range(3)]
    dice = source.throw(3)
    frames += [source.read() for _ in range(20)]
    return frames, sorted(d.value for d in dice)


def _loop_over(source: ReplaySource, store: Path) -> ReadLoop:
    devices = TowerDevices(PinsConfig())  # no drop sensor: motion alone starts the roll
    return ReadLoop(source, Table(store), read_dice, devices, SettleWatch())


def test_replayed_folder_gives_one_roll(tmp_path: Path) -> None:
    frames, truth = _recorded_throw()
    for i, frame in enumerate(frames):
        cv2.imwrite(str(tmp_path / f"frame-{i:03d}.png"), frame)
    loop = _loop_over(ReplaySource(tmp_path), tmp_path / "s.db")
    states = [loop.step() for _ in frames]
    assert TowerState.ROLLING in states
    assert [sorted(d.face for d in r.roll.dice) for r in loop.table.state.history] == [truth]
    assert loop.step() is TowerState.ERROR  # the replay has ended: the camera is gone
    assert "ended" in (loop.error or "")


def test_replayed_video_file(tmp_path: Path) -> None:
    frames, _ = _recorded_throw()
    video = tmp_path / "throw.avi"
    h, w = frames[0].shape[:2]
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (w, h))
    for frame in frames:
        writer.write(frame)
    writer.release()
    source = ReplaySource(video)
    played = [source.read() for _ in frames]
    assert all(p.shape == frames[0].shape for p in played)
    with pytest.raises(SourceExhausted):
        source.read()


@pytest.mark.parametrize("make", ["missing", "empty", "broken"])
def test_bad_replays_say_what_is_wrong(tmp_path: Path, make: str) -> None:
    path = tmp_path / "frames"
    if make != "missing":
        path.mkdir()
    if make == "broken":
        (path / "a.png").write_bytes(b"not a png")
    with pytest.raises(FrameSourceError, match=r"does not exist|no images|cannot read"):
        ReplaySource(path).read()


@pytest.mark.parametrize(
    ("library", "home"), [("picamera2", "vision/sources/pi_camera.py"), ("paho", "mqtt/client.py")]
)
def test_a_hardware_or_wire_library_is_imported_in_one_module(library: str, home: str) -> None:
    importers = [
        p.relative_to(ROOT).as_posix()
        for folder in ("engine", "vision", "mqtt", "firmware")
        for p in (ROOT / folder).rglob("*.py")
        if re.search(rf"^\s*(from|import) {library}\b", p.read_text(), re.M)
    ]
    assert importers == [home]


def test_tray_region_is_found_inside_the_walls() -> None:
    image = np.full((480, 640, 3), 40, np.uint8)  # dark walls
    image[60:420, 100:560] = (150, 160, 170)  # grey floor
    x0, y0, x1, y1 = find_tray(image)
    assert (x0, y0, x1, y1) == pytest.approx((100 / 640, 60 / 480, 560 / 640, 420 / 480), abs=0.02)


def test_calibration_round_trip_and_clear_errors(tmp_path: Path) -> None:
    background = SimulatedSource(1).empty
    save_calibration(tmp_path / "cal", background, (0.1, 0.2, 0.9, 0.8), {"ExposureTime": 9000})
    calibration = load_calibration(tmp_path / "cal")
    assert calibration.tray == (0.1, 0.2, 0.9, 0.8)
    assert calibration.background is not None
    assert calibration.background.shape == background.shape
    with pytest.raises(ValueError, match=r"calibration\.json"):
        load_calibration(tmp_path / "nowhere")


def test_calibrate_command_on_the_simulated_camera(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["calibrate", "--sim", "--out", str(tmp_path / "cal")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "cal" / "calibration.png").exists()
    assert "tray region" in result.output


def test_snapshots_keep_the_newest_frames(tmp_path: Path) -> None:
    from tidetower.firmware.snapshots import Snapshots

    snaps = Snapshots(tmp_path / "snaps", keep=2)
    frame = SimulatedSource(2).empty
    for roll_id in ("t-1", "t-2", "t-3"):
        snaps.keep_frame(roll_id, frame)
    assert sorted(p.name for p in (tmp_path / "snaps").iterdir()) == ["t-2.jpg", "t-3.jpg"]
    assert cv2.imread(str(snaps.path_for("t-3"))).shape == frame.shape
