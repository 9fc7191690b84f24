"""Frame sources and calibration: replayed frames drive the real read loop."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner
from mqtt_fixtures import WAIT

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
from tidetower.vision.sources.webcam import WebcamSource

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
    assert loop.step() is TowerState.RESULT  # the replay has ended: no fault, nothing changes
    assert loop.error is None and "has ended" in (loop.source_ended or "")


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


def test_run_stops_cleanly_when_its_replay_ends(tmp_path: Path) -> None:
    frames, truth = _recorded_throw()
    for i, frame in enumerate(frames):
        cv2.imwrite(str(tmp_path / f"frame-{i:03d}.png"), frame)
    config = tmp_path / "tower.toml"
    config.write_text(
        f'[table]\nstore = "{tmp_path / "s.db"}"\nsnapshots = "{tmp_path / "snaps"}"\n'
        f'corrections = "{tmp_path / "fixed"}"\n'
        f'[camera]\nsource = "replay"\npath = "{tmp_path}"\n'
    )
    result = CliRunner().invoke(main, ["run", "--config", str(config), "--no-mqtt", "--json"])
    assert result.exit_code == 0, result.output
    (roll,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(d["value"] for d in roll["dice"]) == truth
    assert f"replay of {tmp_path} has ended: the tower stops" in result.stderr


class FakeCapture:
    """A VideoCapture whose second read lasts until its source is being closed, and that
    notes a release while a read is under way, or a read after it: what crashes OpenCV."""

    def __init__(self) -> None:
        self.source: WebcamSource | None = None
        self.reading = self.released = False
        self.faults: list[str] = []
        self.reads = 0

    def isOpened(self) -> bool:
        return True

    def set(self, prop: int, value: float) -> bool:
        return True

    def read(self) -> tuple[bool, np.ndarray]:
        if self.released:
            self.faults.append("read after release")
        self.reading, self.reads = True, self.reads + 1
        deadline = time.monotonic() + WAIT
        while self.reads > 1 and self.source is not None and not self.source.closed:
            assert time.monotonic() < deadline, "the source was never closed"
            time.sleep(0.001)  # the driver is busy with a frame
        self.reading = False
        return True, np.zeros((48, 64, 3), np.uint8)

    def release(self) -> None:
        if self.reading:
            self.faults.append("released mid-read")
        self.released = True


def test_a_webcam_is_released_only_once_its_grab_thread_has_stopped() -> None:
    capture = FakeCapture()
    capture.source = source = WebcamSource(capture=capture)
    assert source.read(timeout=WAIT).shape == (48, 64, 3)
    source.close()  # while the grab thread is inside its second read
    assert capture.released and capture.faults == []
