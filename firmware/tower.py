"""The tower put together from its config and its parts: the camera and its calibration,
the pins, and anything acting beside the loop; `real_parts` gives a Pi's (firmware/sim.py
gives simulated ones)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from gpiozero.pins import Factory

from tidetower.engine.table import RECENT, Table
from tidetower.engine.tray import Reading, TowerState
from tidetower.firmware.buttons import Buttons
from tidetower.firmware.config import TowerConfig
from tidetower.firmware.corrections import Corrections, CorrectionWatch
from tidetower.firmware.devices import TowerDevices
from tidetower.firmware.dice_cli import dice_folder
from tidetower.firmware.learn import STOP_SECONDS, Learner, profile_home
from tidetower.firmware.readloop import LoopTiming, ReadLoop
from tidetower.firmware.snapshots import Snapshots
from tidetower.mqtt.commands import CommandDesk
from tidetower.vision.calibrate import load_calibration
from tidetower.vision.dice.table import DiceFileError
from tidetower.vision.dice.teach import learn_typed
from tidetower.vision.read import read_dice
from tidetower.vision.settings import Calibration, ReaderSettings
from tidetower.vision.settle import SettleWatch
from tidetower.vision.sources import FrameSource
from tidetower.vision.sources.registry import CameraConfig

log = logging.getLogger(__name__)


class StepHook(Protocol):
    """Something acting beside the read loop, given its turn before each frame."""

    def before_step(self) -> None: ...


@dataclass(frozen=True)
class TowerParts:
    """What a tower is built from beside its config; once given, the tower closes them."""

    camera: FrameSource
    calibration: Calibration | None
    """The empty tray, to tell dice from it; None: read without one."""
    pin_factory: Factory | None = None
    """gpiozero's pins for the devices; None is gpiozero's default (the Pi's own)."""
    extras: Callable[[ReadLoop], StepHook] | None = None
    """Built beside the read loop once it exists (the simulated people at the table)."""


def real_parts(config: TowerConfig, pin_factory: Factory | None = None) -> TowerParts:
    """The parts the config names: its camera and the calibration `tidetower calibrate`
    stored (none until it has: `config_warnings` says so), on gpiozero's default pins
    unless given others."""
    folder = config.camera.calibration
    camera = open_camera(config.camera)
    try:
        calibration = load_calibration(folder) if folder and folder.exists() else None
    except BaseException:
        camera.close()
        raise
    return TowerParts(camera, calibration, pin_factory)


def open_camera(camera: CameraConfig, seed: int = 0) -> FrameSource:
    """The frame source the config names, opened by its own config model
    (vision/sources/registry.py); picamera2 is imported only when chosen."""
    return camera.open(seed)


class Tower:
    """One running tower; each init_* step builds one part (the store last, so a bad pin
    config leaves no session behind)."""

    def __init__(self, config: TowerConfig, parts: TowerParts) -> None:
        self.config, self.parts = config, parts
        self.camera, self.calibration = parts.camera, parts.calibration
        self._opened: list[Any] = [parts.camera]  # closed in reverse if a later step fails
        self._reader: tuple[ReaderSettings | None, ReaderSettings] = (None, config.camera.reader)
        try:
            self.devices = self._opened_part(self.init_devices())
            self.table = self._opened_part(self.init_table())
            self.loop = self.init_loop()
            self.learner = self.init_learner()
            self.buttons = self.init_buttons()
            self.extras = self.init_extras()
        except BaseException:
            self._close_opened()
            raise

    def _opened_part(self, part: Any) -> Any:
        self._opened.append(part)
        return part

    def _close_opened(self) -> None:
        for part in reversed(self._opened):
            part.close()
        if self.parts.pin_factory is not None:
            self.parts.pin_factory.close()  # leave no pin driven, mock ones included

    def init_table(self) -> Table:
        """The table session, resumed from its store with its latest rolls in memory."""
        table = self.config.table
        return Table(table.store, table.system, table.settings, recent=RECENT)

    def init_devices(self) -> TowerDevices:
        """gpiozero devices on the parts' pins."""
        return TowerDevices(self.config.pins, pin_factory=self.parts.pin_factory)

    def read(self, frame: Any) -> Reading:
        """Read one settled frame with this tower's calibration and reader settings."""
        return read_dice(frame, self.calibration, self.reader)

    @property
    def reader(self) -> ReaderSettings:
        """The config's reader settings, reading the table's dice beside the store unless
        the config names a folder of its own (made once per settings: an adopted profile
        makes new ones)."""
        reader = self.config.camera.reader
        if reader.dice:
            return reader
        if self._reader[0] is not reader:
            dice = str(dice_folder(self.config.table.store))
            self._reader = (reader, replace(reader, dice=dice))
        return self._reader[1]

    @property
    def table_dice(self) -> Path:
        """The folder of the table's dice the reader reads them from."""
        return Path(self.reader.dice or dice_folder(self.config.table.store))

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
        loop.on_settled.append(self.learn_dice)
        return loop

    def learn_dice(self, frame: Any, reading: Reading) -> None:
        """Join the table's dice the GM typed to their photos: they keep learning in play."""
        folder = self.reader.dice
        try:
            learnt = learn_typed(Path(folder), frame, reading) if folder else ()
        except (OSError, DiceFileError) as error:  # a full disk, a damaged die: play goes on
            log.warning("the table's dice did not learn from the GM's dice: %s", error)
            return
        if learnt:
            log.info("learnt from the GM: %s", ", ".join(learnt))

    def init_learner(self) -> Learner | None:
        """Learning from the GM's corrections, into the reader's profile, when asked."""
        if self.loop.corrections is None:
            return None
        home = profile_home(self.config)
        if self.config.camera.reader.profile is None and (home / "profile.json").exists():
            self.adopt_profile(home)  # learned at an earlier start without a profile set
        return Learner(
            self.loop.corrections,
            home,
            lambda: self.config.camera.reader,
            self.adopt_profile,
            self.calibration,
        )

    def init_buttons(self) -> Buttons:
        """The buttons, each a GM command through the desk MQTT's commands use too."""
        return Buttons(self.devices, CommandDesk(self.table, self.loop, self.learner), self.table)

    def adopt_profile(self, profile: Path) -> None:
        """Read with a newly learned profile from the next frame on."""
        reader = self.config.camera.reader
        self.config.camera.reader = replace(reader, profile=str(profile))

    def init_extras(self) -> StepHook | None:
        """Whatever the parts set beside the loop (the simulated people at the table)."""
        return self.parts.extras(self.loop) if self.parts.extras is not None else None

    def step(self) -> None:
        """One frame of the tower, after the extras' turn (if any)."""
        if self.extras is not None:
            self.extras.before_step()
        self.loop.step()

    def close(self) -> None:
        """Stop a learning run between two photos, then release the camera, the pins and the
        store (a process that exits while learning is inside OpenCV aborts)."""
        if self.learner is not None and not self.learner.stop():
            log.warning("learning did not stop within %.0f s; stopping anyway", STOP_SECONDS)
        self._close_opened()

    def __enter__(self) -> Tower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
