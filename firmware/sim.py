"""The tower on simulated parts: mock pins, the simulated camera over its tray, and the
people at the table: a GM who declares rolls, players who throw and clear the tray."""

from __future__ import annotations

import logging
import math
import random
from collections import Counter
from pathlib import Path

import numpy as np
from gpiozero.pins.mock import MockFactory, MockPin, MockPWMPin

from tidetower.engine.dice import DieKind
from tidetower.engine.rules import JSONValue, RollContext, RuleError
from tidetower.engine.systems import DEFAULT_SYSTEM, get_system
from tidetower.engine.tray import TowerState
from tidetower.firmware.config import PinsConfig, TableConfig, TowerConfig
from tidetower.firmware.dice_cli import dice_folder
from tidetower.firmware.readloop import ReadLoop
from tidetower.firmware.rolls import camera_kinds
from tidetower.firmware.sim_dice import lay_out, sim_dice_home, sim_settings, teach_sim_dice
from tidetower.firmware.tower import TowerParts, real_parts
from tidetower.mqtt.ledbar.strip import ROUT_SECONDS
from tidetower.vision.settings import Calibration
from tidetower.vision.sources.simulated import SimulatedConfig, SimulatedSource
from tidetower.vision.synth import SynthDie

log = logging.getLogger(__name__)

ROUT_PAUSE = ROUT_SECONDS + 0.5
"""Seconds the players watch a rout before the tracker is set up afresh: the LED bar's
whole rout animation, and half a second for the bar to reach it."""

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


def sim_config(store: Path, system: str = DEFAULT_SYSTEM) -> TowerConfig:
    """A tower with every part simulated, its session in `store` and its snapshots and
    corrections beside it (`<stem>-snapshots`, `<stem>-corrections`: two simulated towers
    whose stores share a folder keep their own); the system starts from its default settings,
    and its dice are the practice table's own (`sim_dice`), taught once, kept, and laid out
    beside the store (`<stem>-dice`) on its first start."""
    table = TableConfig.model_validate(
        {"system": system, "settings": {}, "store": store, "snapshots_keep": 50}
    )
    return TowerConfig(table=table, camera=SimulatedConfig(), pins=SIM_PINS.model_copy())


WHERE_TO_TYPE = (
    "enter each die the camera cannot read on the page (`tidetower display`) or with "
    "`tidetower gm die index=N kind=KIND value=FACE`; this terminal reads no typing"
)
"""Where a person playing the GM enters a die: MQTT only (the page, `tidetower gm`)."""
GM_MODES = {
    "simulated": "the GM is simulated: it declares each roll and types what the camera cannot read",
    "person": "you are the GM: the players throw what you declare (`tidetower gm declare`, "
    f"the page) and wait for you: {WHERE_TO_TYPE}",
}
"""Who plays the GM at a simulated table, and what the table is told about it."""


def simulated_parts(
    config: TowerConfig, seed: int, mock_pins: bool = True, gm: str = "simulated"
) -> TowerParts:
    """The config's tower on mock pins (or the Pi's own, without `mock_pins`); its simulated
    camera comes with the people who throw into it (`gm`: who declares and types, one of
    GM_MODES), any other camera is used as it is."""
    factory = MockFactory(pin_class=MockPWMPin) if mock_pins else None
    if config.camera.source != "simulated":
        return real_parts(config, factory)
    home = sim_dice_home()
    teach_sim_dice(home, log.info)
    try:
        lay_out(home, Path(config.camera.reader.dice or dice_folder(config.table.store)))
    except OSError as error:  # a full disk: the dice not laid out are read as dice not met
        log.warning("the practice dice were not laid out beside the store: %s", error)
    camera = SimulatedSource(seed, sim_settings())
    calibration = Calibration(background=camera.empty)
    person = gm == "person"
    return TowerParts(
        camera, calibration, factory, lambda loop: SimulatedTable(loop, camera, seed, person)
    )


class SimulatedTable:
    """Plays the people at the table, one decision whenever the simulated tray is idle."""

    def __init__(
        self,
        loop: ReadLoop,
        source: SimulatedSource,
        seed: int,
        person_gm: bool = False,
        hand_chance: float = 0.2,
    ) -> None:
        self.loop, self.source, self.table = loop, source, loop.table
        self.person_gm = person_gm
        """A person is the GM: the players throw only what is declared, and never type."""
        self.rng = np.random.default_rng(seed + 1)
        self.players = random.Random(seed)
        """What the players declare and throw is drawn from this (the system's practice)."""
        self.hand_chance = hand_chance
        self.practice: dict[str, JSONValue] = {}
        """Options of the system's practice (its `practice_turn`'s; none: its own ways);
        options a system does not take are ignored."""
        self.thrown: list[tuple[SynthDie, ...]] = []
        self.hands_in_empty_tray = 0
        self.gm_fixes = 0
        self._rout_watched: str | None = None
        """The last roll when the players last watched a rout, so they watch each once."""
        self._beam: MockPin | None = None
        sensor = loop.devices.drop_sensor
        if sensor is not None and isinstance(sensor.pin, MockPin):  # on the Pi's pins: no beam
            self._beam = sensor.pin
            source.on_drop = self._break_beam

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
        elif state is TowerState.NEEDS_ATTENTION and not self.person_gm:
            self._gm_fixes()

    def _idle_turn(self) -> None:
        if self._watch_rout():
            return
        if self.rng.random() < self.hand_chance:
            self.source.reach_in()  # a hand in the empty tray: must not become a roll
            self.hands_in_empty_tray += 1
            self.source.wait(3)
            return
        kinds = self._declared_throw() if self.person_gm else self._practice_turn()
        if kinds is None:
            self.source.wait(math.ceil(self.source.settings.fps))  # the players wait for the GM
            return
        self.thrown.append(self.source.throw(dice=kinds))

    def _watch_rout(self) -> bool:
        """On a routed tracker, wait out the LED bar's rout animation once before the next
        turn (which sets a new one up); True if the players wait now."""
        history = self.table.state.history
        last = history[-1].id if history else None
        if self.table.bar().routed is None or self._rout_watched == last:
            return False
        self._rout_watched = last
        self.source.wait(math.ceil(ROUT_PAUSE * self.source.settings.fps))
        return True

    def _practice_turn(self) -> tuple[str, ...]:
        """Ask the table's rule system what the players do next: set the tracker up afresh,
        declare, and the dice to throw (none named: a handful of pip d6). Under the table's
        lock: a GM's command (an undo of the roll the turn replies to) waits for the turn."""
        with self.table.lock:
            state = self.table.state
            system = get_system(state.system)
            turn = system.practice_turn(state.tracker, state.history, self.players, self.practice)
            if turn.reset is not None:
                self.table.reset_tracker(turn.reset)
            if turn.context is not None:
                self.table.declare(turn.context)
        return tuple(kind for die in turn.dice for kind in camera_kinds(die))

    def _declared_throw(self) -> tuple[str, ...] | None:
        """The dice for the roll the GM declared: those the system says it throws, with the
        practice's dice beside its pool (`beside`), else the system's practice dice for it;
        None while nothing is declared."""
        with self.table.lock:
            state = self.table.state
            if state.declared == RollContext():
                return None
            system = get_system(state.system)
            turn = system.practice_turn(state.tracker, state.history, self.players, self.practice)
            declared = system.declared_dice(state.tracker, state.declared)
        dice = turn.dice if declared is None else declared + beside(turn.dice, declared)
        return tuple(kind for die in dice for kind in camera_kinds(die))

    def _gm_fixes(self) -> None:
        """The GM looks at the tray and types in what the camera could not read. Someone
        else (a `reread` over MQTT) may change the tower's state meanwhile: a refusal then
        only means this turn is over, the next one looks again."""
        attention = self.loop.attention
        reading = attention.reading if attention is not None else None
        tray = tuple(self.source.dice)  # as it is now: a re-read may empty it meanwhile
        if attention is None or reading is None or not reading.unreadable or not tray:
            self._throw_again()
            return
        self.gm_fixes += 1
        box = reading.unreadable[0].box
        truth = min(tray, key=lambda d: _distance(d.box, box))
        try:
            self.loop.enter_die(attention.die_numbers()[0], truth.die, truth.value)
        except RuleError:
            self._throw_again()

    def _throw_again(self) -> None:
        """Pick the dice up to throw again, unless the tower has moved on (a re-read)."""
        try:
            self.loop.rethrow()
        except RuleError:
            return
        self.source.reach_in()
        self.source.wait(self.loop.timing.clear_frames + 2)


def beside(practice: tuple[DieKind, ...], declared: tuple[DieKind, ...]) -> tuple[DieKind, ...]:
    """The practice's dice beside its pool (kinds other than its most thrown, e.g. a d20
    thrown with a pool) that the declared dice do not name."""
    if not practice:
        return ()
    pool = Counter(practice).most_common(1)[0][0]
    return tuple(die for die in practice if die is not pool and die not in declared)


def _distance(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return float((a[0] + a[2] - b[0] - b[2]) ** 2 + (a[1] + a[3] - b[1] - b[3]) ** 2)
