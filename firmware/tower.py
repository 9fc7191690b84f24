"""The tower put together: config → table → devices → camera → reader → read loop."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from gpiozero.pins.mock import MockFactory, MockPWMPin

from tidetower.engine.table import Table
from tidetower.engine.tray import Reading, TowerState
from tidetower.firmware.config import CameraConfig, PinsConfig, TableConfig, TowerConfig
from tidetower.firmware.corrections import Corrections, CorrectionWatch
from tidetower.firmware.devices import TowerDevices
from tidetower.firmware.learn import Learner, profile_home
from tidetower.firmware.readloop import LoopTiming, ReadLoop
from tidetower.firmware.sim import BEAM_PIN, SimulatedTable
from tidetower.firmware.snapshots import Snapshots
from tidetower.vision.calibrate import exposure_of, load_calibration
from tidetower.vision.read import read_dice
from tidetower.vision.settings import Calibration
from tidetower.vision.settle import SettleWatch
from tidetower.vision.sources import FrameSource
from tidetower.vision.sources.simulated import SimulatedSource

SIM_PINS = PinsConfig(
    drop_sensor=BEAM_PIN,
    tray_light=27,
    status_red=5,
    status_green=6,
    status_blue=13,
    button_side_a=20,
    button_side_b=21,
    button_link=16,
    button_undo=19,
    button_reread=26,
)


def sim_config(store: Path | None, system: str = "tide") -> TowerConfig:
    """A tower with every part simulated, its session in `store` or a fresh temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix="tidetower-sim-")) if store is None else store.parent
    settings: dict[str, Any] = {}
    if system == "tide":
        settings = {"weight_a": 8, "weight_b": 8, "size": "skirmish"}
    table = TableConfig(
        name="sim",
        system=system,
        settings=settings,
        store=store or folder / "session.db",
        snapshots=folder / "snapshots",
        snapshots_keep=50,
        corrections=folder / "corrections",
    )
    return TowerConfig(
        table=table, camera=CameraConfig(source="simulated"), pins=SIM_PINS.model_copy()
    )


def open_camera(camera: CameraConfig, seed: int) -> FrameSource:
    """The frame source the config names; picamera2 is imported only when chosen."""
    if camera.source == "simulated":
        return SimulatedSource(seed)
    if camera.source == "replay":
        from tidetower.vision.sources.replay import ReplaySource

        if camera.path is None:
            raise ValueError("camera.path is required for a replay source")
        return ReplaySource(camera.path)
    if camera.source == "webcam":
        from tidetower.vision.sources.webcam import WebcamSource

        return WebcamSource(camera.device, camera.size)
    from tidetower.vision.sources.pi_camera import PiCameraSource

    locked = _locked_exposure(camera.calibration)
    return PiCameraSource(size=camera.size or (1296, 972), **locked)


def _locked_exposure(calibration: Path | None) -> dict[str, Any]:
    """Exposure and white balance measured at calibration, to lock the Pi camera to."""
    if calibration is None or not (calibration / "calibration.json").exists():
        return {}
    stored = exposure_of(calibration)
    gains = stored.get("ColourGains")
    return {
        "exposure_us": stored.get("ExposureTime"),
        "analogue_gain": stored.get("AnalogueGain"),
        "colour_gains": tuple(gains) if gains else None,
    }


class Tower:
    """One running tower; each init_* step builds one part (the store last, so a bad camera
    or pin config leaves no session behind)."""

    def __init__(self, config: TowerConfig, sim_seed: int | None = None) -> None:
        self.config = config
        self.sim_seed = sim_seed
        self.factory: MockFactory | None = None
        self._opened: list[Any] = []  # closed in reverse if a later step fails
        try:
            self.camera = self._opened_part(self.init_camera())
            self.calibration = self.init_calibration()
            self.devices = self._opened_part(self.init_devices())
            self.table = self._opened_part(self.init_table())
            self.loop = self.init_loop()
            self.learner = self.init_learner()
            self.sim = self.init_simulation()
        except BaseException:
            self._close_opened()
            raise

    def _opened_part(self, part: Any) -> Any:
        self._opened.append(part)
        return part

    def _close_opened(self) -> None:
        for part in reversed(self._opened):
            part.close()
        if self.factory is not None:
            self.factory.reset()  # mock pins are shared process-wide: leave none driven

    def init_table(self) -> Table:
        """The table session, resumed from its store."""
        table = self.config.table
        return Table(table.store, table.system, table.settings)

    def init_devices(self) -> TowerDevices:
        """gpiozero devices; on mock pins when the tower is simulated."""
        if self.sim_seed is not None:
            self.factory = MockFactory(pin_class=MockPWMPin)
        return TowerDevices(self.config.pins, pin_factory=self.factory)

    def init_camera(self) -> FrameSource:
        """The configured frame source."""
        return open_camera(self.config.camera, self.sim_seed or 0)

    def init_calibration(self) -> Calibration | None:
        """The empty tray: from the simulated camera, or as `tidetower calibrate` stored it."""
        if isinstance(self.camera, SimulatedSource):
            return Calibration(background=self.camera.empty)
        folder = self.config.camera.calibration
        return load_calibration(folder) if folder is not None else None

    def read(self, frame: Any) -> Reading:
        """Read one settled frame with this tower's calibration and reader settings."""
        return read_dice(frame, self.calibration, self.config.camera.reader)

    def init_loop(self) -> ReadLoop:
        """The read loop over the camera, table and devices."""
        timing = LoopTiming(
            **self.config.loop.model_dump(), frame_timeout_s=self.config.camera.frame_timeout_s
        )
        background = self.calibration.background if self.calibration else None
        table = self.config.table
        corrections = Corrections(table.corrections, table.corrections_keep)
        loop = ReadLoop(
            self.camera,
            self.table,
            self.read,
            self.devices,
            SettleWatch(empty_tray=background),
            timing,
            Snapshots(table.snapshots, table.snapshots_keep),
            corrections=corrections,
        )
        watch = CorrectionWatch(corrections, lambda: loop.state is TowerState.READING)
        loop.on_roll.append(
            lambda record, reading: watch.camera_roll(record.id, loop.frame, reading)
        )
        self.table.listeners.append(watch.table_event)
        return loop

    def init_learner(self) -> Learner | None:
        """Learning from the GM's corrections, into the reader's profile, when asked."""
        if self.loop.corrections is None:
            return None
        return Learner(
            self.loop.corrections,
            profile_home(self.config),
            lambda: self.config.camera.reader,
            self.adopt_profile,
            self.calibration,
        )

    def adopt_profile(self, profile: Path) -> None:
        """Read with a newly learned profile from the next frame on."""
        reader = self.config.camera.reader
        self.config.camera.reader = replace(reader, profile=str(profile))

    def init_simulation(self) -> SimulatedTable | None:
        """The simulated people at the table, when the tower is simulated."""
        if not isinstance(self.camera, SimulatedSource):
            return None
        sim = SimulatedTable(self.loop, self.camera, self.sim_seed or 0, self.factory)
        self.loop.on_roll.append(lambda record, _reading: sim.note_roll(record.id))
        return sim

    def step(self) -> None:
        """One frame of the tower (and of the simulated table, if any)."""
        if self.sim is not None:
            self.sim.before_step()
        self.loop.step()

    def close(self) -> None:
        """Release the camera, the pins and the store."""
        self._close_opened()

    def __enter__(self) -> Tower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
