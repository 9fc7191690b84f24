"""The read loop: one frame at a time from drop to result, each roll read exactly once.

idle → rolling → settling → reading → result → waiting-for-clear → idle, plus
needs-attention (a die it cannot read, a blocked sensor, a tray that never settles) and
error (the camera stopped). It owns the order of things and nothing else: the camera,
the reader, the table session and the devices are handed to it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tidetower.engine.dice import DieError, Roll
from tidetower.engine.hooks import Hooks
from tidetower.engine.rules import RollRecord, RuleError
from tidetower.engine.store import StoreError
from tidetower.engine.table import Table
from tidetower.engine.tray import (
    Attention,
    AttentionKind,
    Reading,
    TowerState,
    roll_of,
    unreadable_reason,
)
from tidetower.firmware.config import LoopConfig
from tidetower.firmware.corrections import Corrections, entered, not_a_die, question
from tidetower.firmware.devices import TowerDevices
from tidetower.firmware.snapshots import Snapshots
from tidetower.vision.settle import FrozenWatch, SettleWatch
from tidetower.vision.sources import FrameSource, FrameSourceError, SourceExhausted
from tidetower.vision.sources.base import SourceConfig

Reader = Callable[[np.ndarray], Reading]
log = logging.getLogger(__name__)


_CONFIGURED = LoopConfig()
"""The config's defaults: a loop built without a config times itself the same."""


@dataclass(frozen=True)
class LoopTiming:
    """How many still frames make a settled tray, and how long before giving up, in seconds."""

    settle_frames: int = _CONFIGURED.settle_frames
    clear_frames: int = _CONFIGURED.clear_frames
    roll_timeout_s: float = _CONFIGURED.roll_timeout_s
    sensor_timeout_s: float = _CONFIGURED.sensor_timeout_s
    frame_timeout_s: float = SourceConfig.model_fields["frame_timeout_s"].default
    frozen_frames: int = 50
    """Byte-identical frames in a row that mean the camera froze (real sensors are noisy)."""


class ReadLoop:
    """Drives one tower: call `step()` once per frame."""

    def __init__(
        self,
        source: FrameSource,
        table: Table,
        reader: Reader,
        devices: TowerDevices,
        watch: SettleWatch,
        timing: LoopTiming | None = None,
        snapshots: Snapshots | None = None,
        clock: Callable[[], float] | None = None,
        corrections: Corrections | None = None,
    ) -> None:
        self.source, self.table, self.reader, self.devices = source, table, reader, devices
        self.watch, self.snapshots, self.corrections = watch, snapshots, corrections
        self.timing = timing or LoopTiming()
        self.clock = clock or getattr(source, "clock", None) or time.monotonic
        self.state = TowerState.IDLE
        self.attention: Attention | None = None
        self._attention_frame: np.ndarray | None = None
        self.error: str | None = None
        self.source_ended: str | None = None
        """Why a finite camera (a replay) has no more frames; None while it has."""
        # Each listener is called in turn; one that fails (a terminal that cannot draw the
        # roll, a wire that cannot publish it) is reported in the table's problems, and the
        # loop carries on: the roll is stored already.
        problems = table.problems
        self.on_roll: Hooks[[RollRecord, Reading]] = Hooks("drawing or announcing it", problems)
        self.on_state: Hooks[[TowerState]] = Hooks("showing it", problems)
        self.before_record: Hooks[[Reading]] = Hooks("announcing the dice seen", problems)
        self.on_settled: Hooks[[np.ndarray, Reading]] = Hooks("learning from the GM", problems)
        """Called with the frame and the reading once the GM has settled it and it counts."""
        # step() runs on the loop thread; MQTT commands call reread/enter_die/drop_die from theirs.
        self._lock = threading.RLock()
        self._dropped = threading.Event()
        self._since = self.clock()
        self._frame: np.ndarray | None = None
        self._before_error = TowerState.IDLE
        self._recorded: str | None = None  # id of the roll this loop recorded last
        self._replacing: str | None = None  # a re-read after a result replaces this roll
        self._blocked_since: float | None = None
        self._frozen = FrozenWatch()
        self._wire_devices()
        self._enter(TowerState.IDLE)

    def _wire_devices(self) -> None:
        sensor = self.devices.drop_sensor
        if sensor is not None:
            sensor.when_activated = self._dropped.set

    @property
    def frame(self) -> np.ndarray | None:
        """The latest frame the loop looked at (the settled tray, just after a read)."""
        return self._frame

    # -- the GM's commands (tidetower.mqtt.commands.CommandDesk), from any thread --------

    def reread(self) -> None:
        """Read the settled tray again; after a result the new reading replaces that roll."""
        with self._lock:
            if self.state is TowerState.WAITING_FOR_CLEAR:
                raise RuleError("the tray has been touched since the result: throw again")
            if self.state not in (TowerState.RESULT, TowerState.NEEDS_ATTENTION):
                raise RuleError(f"nothing to re-read: the tower is {self.state.value}")
            if self.state is TowerState.RESULT:
                self._replacing = self._recorded  # undone only once the new reading counts
            self._enter(TowerState.READING)

    def clear_tray(self) -> None:
        """Tip the tray clear with the servo (if fitted); it levels again once the tray is empty."""
        with self._lock:
            if self.state in (TowerState.RESULT, TowerState.WAITING_FOR_CLEAR):
                self.devices.tip_tray(True)

    def tip(self) -> None:
        """The GM's `tip`: pour out the dice of a stored roll, or of a throw to be thrown
        again; refused without a servo, and while the dice are still to be read or settled."""
        with self._lock:
            if self.devices.servo is None:
                raise RuleError("this tower has no tray servo to tip (pins.servo)")
            if self.state not in (TowerState.RESULT, TowerState.WAITING_FOR_CLEAR):
                settle = (
                    " (settle it, or rethrow)" if self.state is TowerState.NEEDS_ATTENTION else ""
                )
                raise RuleError(f"nothing to tip out: the tower is {self.state.value}{settle}")
            self.clear_tray()

    def rethrow(self) -> None:
        """Forget the pending reading: the dice are to be picked up and thrown again."""
        with self._lock:
            if self.state is not TowerState.NEEDS_ATTENTION:
                raise RuleError(f"nothing to throw again: the tower is {self.state.value}")
            self.attention = None
            self._enter(TowerState.WAITING_FOR_CLEAR)

    def enter_die(self, index: int, die: str, value: int) -> None:
        """The GM says what unreadable die `index` shows; when none is left the roll counts
        and is kept, with the frame it was read from, as a correction."""
        with self._lock:
            self._finish(entered(self._pending(), index, die, value))

    def drop_die(self, index: int) -> None:
        """The GM says unreadable die `index` is no die (a tray corner, a shadow): it is left
        out; when none is left the roll counts, and is kept as a correction without it."""
        with self._lock:
            self._finish(not_a_die(self._pending(), index))

    def _pending(self) -> Attention | None:
        """The reading waiting for the GM, if one is."""
        return self.attention if self.state is TowerState.NEEDS_ATTENTION else None

    def _finish(self, attention: Attention) -> None:
        """Go on with the reading as the GM amended it: wait for the dice still unread, or
        count the roll and keep it, with the frame it was read from, as a correction."""
        self.attention = attention
        if attention.reading is None or attention.reading.unreadable:
            self._enter(TowerState.NEEDS_ATTENTION)  # tell the displays what is left
            return
        frame = self._attention_frame
        self._record(attention.reading)
        if self.state is not TowerState.RESULT:
            return
        if self.corrections is not None:
            self.corrections.keep_finished(str(self._recorded), frame, attention)
        if frame is not None:
            self.on_settled.call("the roll the GM settled", frame, attention.reading)

    # -- the frame-by-frame state machine ---------------------------------------------------

    def step(self) -> TowerState:
        """Take one frame (or notice there is none) and move the state machine on."""
        try:
            frame = self.source.read(timeout=self.timing.frame_timeout_s)
        except SourceExhausted as error:  # not a fault: there is nothing more to read
            self.source_ended = str(error)
            return self.state
        except FrameSourceError as error:
            with self._lock:
                self._camera_failed(str(error))
            return self.state
        with self._lock:
            return self._advance(frame)

    def _advance(self, frame: np.ndarray) -> TowerState:
        """Move the state machine on with a new frame (under the loop's lock)."""
        same = self._frozen.update(frame)
        if same >= self.timing.frozen_frames:
            self._camera_failed(f"the camera froze: {same} identical frames in a row")
            return self.state
        self._watch_sensor()
        if self.state is TowerState.ERROR:
            self._camera_back()
        self._frame = frame
        moved = self.watch.update(frame)
        HANDLERS[self.state](self, frame, moved)
        return self.state

    def _watch_sensor(self) -> None:
        sensor = self.devices.drop_sensor
        if sensor is None or not sensor.is_active:
            self._blocked_since = None
        elif self._blocked_since is None:
            self._blocked_since = self.clock()

    def _sensor_blocked(self) -> bool:
        """True while dice are still passing the beam; attention if it stays blocked."""
        if self._blocked_since is None:
            return False
        if self.clock() - self._blocked_since > self.timing.sensor_timeout_s:
            self._needs_attention(
                "blocked", "the drop sensor stays blocked: is a die stuck in the tower?"
            )
        return True

    def _enter(self, state: TowerState) -> None:
        self.state = state
        if state is not TowerState.NEEDS_ATTENTION:
            self.attention = None  # nothing stale for a late `die` command to complete
        if state is TowerState.IDLE:
            self._replacing = None
        self._since = self.clock()
        self.devices.show(state)
        self.devices.light_tray(state is TowerState.READING)
        self.on_state.call(f"the tower's state {state.value}", state)

    def _elapsed(self) -> float:
        return self.clock() - self._since

    def _camera_failed(self, why: str) -> None:
        self.error = why
        if self.state is not TowerState.ERROR:
            self._before_error = self.state
            self._enter(TowerState.ERROR)

    def _camera_back(self) -> None:
        self.error = None
        resume = self._before_error
        if resume in (TowerState.READING, TowerState.ROLLING):
            resume = TowerState.SETTLING  # read only from a frame seen after the outage
        self._enter(resume)

    def _idle(self, frame: np.ndarray, moved: bool) -> None:
        dropped = self._dropped.is_set()
        self._dropped.clear()
        if dropped or (self.devices.drop_sensor is None and moved):
            self._enter(TowerState.ROLLING)

    def _rolling(self, frame: np.ndarray, moved: bool) -> None:
        if self._sensor_blocked():
            return
        if not moved:
            self._enter(TowerState.SETTLING)
        elif self._elapsed() > self.timing.roll_timeout_s:
            self._needs_attention("unsettled", "the tray never settled")

    def _settling(self, frame: np.ndarray, moved: bool) -> None:
        if self._sensor_blocked():
            return
        if moved:
            self._enter(TowerState.ROLLING)
        elif self.watch.still_frames >= self.timing.settle_frames:
            self._enter(TowerState.READING)
            self._read(frame)

    def _reading(self, frame: np.ndarray, moved: bool) -> None:
        self._read(frame)

    def _read(self, frame: np.ndarray) -> None:
        """Read the settled tray once; an empty tray (a hand, not a throw) is no roll."""
        reading = self.reader(frame)
        if not reading.dice and not reading.unreadable:
            self._enter(TowerState.IDLE)
        elif reading.unreadable:
            self._needs_attention("unreadable", unreadable_reason(reading.unreadable), reading)
        else:
            self._record(reading)

    def _record(self, reading: Reading) -> None:
        self.before_record.call("a throw about to be recorded", reading)
        try:
            record = self._record_roll(roll_of(reading), reading)
        except (RuleError, DieError) as error:
            asked, why = question(self.table.state, reading, str(error))
            self._needs_attention("refused", why, asked)
            return
        except StoreError as error:  # a full disk: the roll waits, as read, for a re-read
            reason = f"{error}: free some space, then re-read the tray to keep this roll"
            self._needs_attention("unsaved", reason, reading)
            return
        self.attention = None
        self._enter(TowerState.RESULT)
        self.on_roll.call(f"roll {record.id} (stored)", record, reading)
        self.clear_tray()  # stored, nothing left for the GM: a fitted servo pours it out

    def _record_roll(self, roll: Roll, reading: Reading) -> RollRecord:
        """Record the roll; a re-read first takes back the roll it replaces, if still last."""
        with self.table.lock:
            last = self.table.state.last
            if self._replacing is not None and last is not None and last.id == self._replacing:
                self.table.undo()
            self._replacing = None
            # the photo is on disk before anyone hears of the roll that names it
            photo = self._keep_photo(self.table.state.next_id)
            try:
                record = self.table.record(roll, reading=reading.dice, snapshot=photo)
            except BaseException:
                if self.snapshots is not None:
                    self.snapshots.forget(photo)
                raise
        self._recorded = record.id
        return record

    def _keep_photo(self, name: str) -> str | None:
        """Keep the tray's photo as `name` (the frame the GM is finishing, else the latest);
        returns its file name, or None when no photo is kept."""
        waiting = self.state is TowerState.NEEDS_ATTENTION
        frame = self._attention_frame if waiting else self._frame
        if self.snapshots is None or frame is None:
            return None
        return self.snapshots.keep_frame(name, frame)

    def _needs_attention(
        self, kind: AttentionKind, reason: str, reading: Reading | None = None
    ) -> None:
        self._attention_frame = self._frame  # the frame the GM's correction is kept with
        photo = None
        if reading is not None:  # the page crops each die the GM is asked about from it
            photo = self._keep_photo(f"attention-{self.table.state.next_id}")
        self.attention = Attention(kind, reason, reading, snapshot=photo)
        self._enter(TowerState.NEEDS_ATTENTION)

    def _result(self, frame: np.ndarray, moved: bool) -> None:
        """The result shows until someone reaches into the tray."""
        if moved:
            self._enter(TowerState.WAITING_FOR_CLEAR)

    def _waiting(self, frame: np.ndarray, moved: bool) -> None:
        """Back to idle once the tray has been still and empty for a few frames."""
        if moved or self.watch.still_frames < self.timing.clear_frames:
            return
        if not self._tray_has_dice(frame):
            self._dropped.clear()  # a hand that brushed the sensor is no throw
            self.devices.tip_tray(False)
            self._enter(TowerState.IDLE)

    def _attention(self, frame: np.ndarray, moved: bool) -> None:
        blocked = self.attention is not None and self.attention.kind == "blocked"
        if blocked and self._blocked_since is None:
            self.attention = None
            self._enter(TowerState.SETTLING)  # unblocked: the dice below are still to be read

    def _error(self, frame: np.ndarray, moved: bool) -> None:
        """Only reached when frames are back; `step` already resumed."""

    def _tray_has_dice(self, frame: np.ndarray) -> bool:
        present = self.watch.anything_present(frame)
        if present is not None:
            return present
        reading = self.reader(frame)
        return bool(reading.dice or reading.unreadable)


HANDLERS: dict[TowerState, Callable[[ReadLoop, np.ndarray, bool], None]] = {
    TowerState.IDLE: ReadLoop._idle,
    TowerState.ROLLING: ReadLoop._rolling,
    TowerState.SETTLING: ReadLoop._settling,
    TowerState.READING: ReadLoop._reading,
    TowerState.RESULT: ReadLoop._result,
    TowerState.WAITING_FOR_CLEAR: ReadLoop._waiting,
    TowerState.NEEDS_ATTENTION: ReadLoop._attention,
    TowerState.ERROR: ReadLoop._error,
}
