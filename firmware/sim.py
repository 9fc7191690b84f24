"""The tower on simulated parts: mock pins, the simulated camera over its tray, and the
people at the table: a GM who declares rolls, players who throw and clear the tray."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from gpiozero.pins.mock import MockFactory, MockPin, MockPWMPin

from tidetower.engine.rules import RollContext, RuleError, Side
from tidetower.engine.tray import TowerState
from tidetower.firmware.config import CameraConfig, PinsConfig, TableConfig, TowerConfig
from tidetower.firmware.readloop import ReadLoop
from tidetower.firmware.tower import TowerParts, real_parts
from tidetower.vision.settings import Calibration
from tidetower.vision.sources.simulated import SimulatedSource
from tidetower.vision.synth import SynthDie

SIM_PINS = PinsConfig(
    drop_sensor=17,
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


def simulated_parts(config: TowerConfig, seed: int, mock_pins: bool = True) -> TowerParts:
    """The config's tower on mock pins (or the Pi's own, without `mock_pins`); its simulated
    camera comes with the people who throw into it, any other camera is used as it is."""
    factory = MockFactory(pin_class=MockPWMPin) if mock_pins else None
    if config.camera.source != "simulated":
        return real_parts(config, factory)
    camera = SimulatedSource(seed)
    calibration = Calibration(background=camera.empty)
    return TowerParts(camera, calibration, factory, lambda loop: SimulatedTable(loop, camera, seed))


class SimulatedTable:
    """Plays the people at the table, one decision whenever the simulated tray is idle."""

    def __init__(
        self, loop: ReadLoop, source: SimulatedSource, seed: int, hand_chance: float = 0.2
    ) -> None:
        self.loop, self.source, self.table = loop, source, loop.table
        self.rng = np.random.default_rng(seed + 1)
        self.hand_chance = hand_chance
        self.tiers: tuple[str, ...] = ("d6", "d6", "d8", "d12")
        """The Tide pool's tier is drawn from these for each throw."""
        self.omen = True
        """Tide throws carry the d20 Omen."""
        self.thrown: list[tuple[SynthDie, ...]] = []
        self.hands_in_empty_tray = 0
        self.gm_fixes = 0
        self._opening: str | None = None
        self._pool = 3  # the d6-pool rating declared for the next throw
        self._beam: MockPin | None = None
        sensor = loop.devices.drop_sensor
        if sensor is not None and isinstance(sensor.pin, MockPin):  # on the Pi's pins: no beam
            self._beam = sensor.pin
            source.on_drop = self._break_beam
        loop.on_roll.append(lambda record, _reading: self.note_roll(record.id))

    def _break_beam(self, broken: bool) -> None:
        assert self._beam is not None
        # The break-beam receiver pulls its line low while a die is in the beam.
        self._beam.drive_low() if broken else self._beam.drive_high()

    def before_step(self) -> None:
        """Act if the tray has nothing scheduled: throw, clear, fix, or just reach in."""
        if not self.source.idle:
            return
        state = self.loop.state
        if state is TowerState.IDLE:
            self._idle_turn()
        elif state in (TowerState.RESULT, TowerState.WAITING_FOR_CLEAR):
            self.source.wait(2)
            self.source.reach_in()
            self.source.wait(self.loop.timing.clear_frames + 2)
        elif state is TowerState.NEEDS_ATTENTION:
            self._gm_fixes()

    def _idle_turn(self) -> None:
        if self.rng.random() < self.hand_chance:
            self.source.reach_in()  # a hand in the empty tray: must not become a roll
            self.hands_in_empty_tray += 1
            self.source.wait(3)
            return
        self._declare()
        self.thrown.append(self.source.throw(dice=self._throw_kinds()))

    def _throw_kinds(self) -> tuple[str, ...]:
        """What a player throws for the table's system: a Tide pool of one tier with the d20
        Omen, a graded-d100's tens and units d10, a d6 pool of the declared rating, the
        Tide of Battle's d20 attack; elsewhere pip d6, as many as it likes."""
        system = self.table.state.system
        if system == "tide":
            tier = str(self.rng.choice(self.tiers))
            return (tier,) * int(self.rng.integers(2, 6)) + (("d20",) if self.omen else ())
        return {
            "graded-d100": ("d10-tens", "d10"),
            "d6-pool": ("d6",) * self._pool,
            "tide-of-battle": ("d20",),
        }.get(system, ())

    def _declare(self) -> None:
        """Tide tables: alternate an opening throw for A and B's reply, both Tide-linked;
        graded-d100 and Tide of Battle tables: the sides take turns to attack; d6-pool
        tables: an action of rating 1 to 4."""
        system = self.table.state.system
        side: Side = "a" if len(self.table.state.history) % 2 == 0 else "b"
        if system in ("graded-d100", "tide-of-battle"):
            self.table.declare(RollContext(actor=f"Side {side.upper()}", side=side, mode="attack"))
            return
        if system == "d6-pool":
            self._pool = int(self.rng.integers(1, 5))
            self.table.declare(RollContext(actor="Player", pool=self._pool))
            return
        if system != "tide":
            return
        if self.table.bar().routed is not None:
            track = self.table.state.tracker.track
            self.table.reset_tracker(
                {
                    "weight_a": track.weight_a,
                    "weight_b": track.weight_b,
                    "size": track.size,
                    "footing": track.footing,
                }
            )
            self._opening = None
        last = self.table.state.last
        if self._opening is None or last is None or last.id != self._opening:
            context = RollContext(actor="Side A", side="a", mode="tide", tide_linked=True)
        else:
            context = RollContext(actor="Side B", side="b", reply_to=self._opening)
        self.table.declare(context)

    def note_roll(self, roll_id: str) -> None:
        """Remember an opening roll so the next throw can reply to it."""
        record = self.table.state.roll(roll_id)
        opening = record is not None and record.context.reply_to is None
        self._opening = roll_id if opening else None

    def _gm_fixes(self) -> None:
        """The GM looks at the tray and types in what the camera could not read."""
        attention = self.loop.attention
        if attention is None or attention.reading is None or not attention.reading.unreadable:
            self.loop.rethrow()
            self.source.reach_in()
            self.source.wait(self.loop.timing.clear_frames + 2)
            return
        self.gm_fixes += 1
        box = attention.reading.unreadable[0].box
        truth = min(self.source.dice, key=lambda d: _distance(d.box, box))
        try:
            self.loop.enter_die(0, truth.die, truth.value)
        except RuleError:
            self.loop.rethrow()
            self.source.reach_in()
            self.source.wait(self.loop.timing.clear_frames + 2)


def _distance(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return float((a[0] + a[2] - b[0] - b[2]) ** 2 + (a[1] + a[3] - b[1] - b[3]) ** 2)
