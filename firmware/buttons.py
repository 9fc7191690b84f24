"""The tower's buttons: each press is a GM command, applied by the same desk as MQTT's."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

from tidetower.engine.rules import RollContext
from tidetower.engine.systems import get_system
from tidetower.engine.table import Table
from tidetower.firmware.devices import TowerDevices
from tidetower.mqtt.bodies import Refused
from tidetower.mqtt.commands import CommandDesk, declare_command
from tidetower.mqtt.registry import COMMANDS

log = logging.getLogger(__name__)

Amend = Callable[[RollContext, str], RollContext]
"""The declaration after a press, under the named system."""
AMENDS: dict[str, Amend] = {
    "side_a": lambda declared, _system: dataclasses.replace(declared, side="a"),
    "side_b": lambda declared, _system: dataclasses.replace(declared, side="b"),
    "link": lambda declared, system: toggled(declared, system),
}
"""Buttons that change the declared roll: side A, side B, and the flag the active system's
description names as its toggle (a flag such as whether the roll moves the tracker)."""


def toggled(declared: RollContext, system: str) -> RollContext:
    """The declaration with the system's toggle flipped; unchanged where it has none."""
    flag = get_system(system).describe().toggle
    if flag is None:
        return declared
    params = {**declared.params, flag: not declared.params.get(flag, False)}
    return dataclasses.replace(declared, params=params)


PLAIN: dict[str, str] = {"undo": "undo", "reread": "reread", "tip": "tip"}
"""Buttons that are a command of their own: the registry's command each sends."""


class Buttons:
    """Wires the tower's buttons to the desk; a refused press is logged and changes nothing."""

    def __init__(self, devices: TowerDevices, desk: CommandDesk, table: Table) -> None:
        self.desk, self.table = desk, table
        for name in (*AMENDS, *PLAIN):
            devices.on_press(name, self._presser(name))

    def _presser(self, name: str) -> Callable[[], None]:
        return lambda: self.press(name)

    def press(self, name: str) -> None:
        """What the button `name` does, as if pressed: refusals and failures are logged,
        never raised, so no press stops the tower."""
        try:
            self._apply(name)
        except Refused as refusal:
            log.info("%s refused: %s", name, refusal.message)
        except Exception:
            log.exception("the %s button failed; the tower carries on", name)

    def _apply(self, name: str) -> None:
        request = f"button:{name}"
        if name in PLAIN:  # the desk takes the lock the command needs, never under the table's
            self.desk.apply(COMMANDS[PLAIN[name]].model(id=request))
            return
        with self.table.lock:  # the declared roll read and amended in one step
            state = self.table.state
            amended = AMENDS[name](state.declared, state.system)
            self.desk.apply(declare_command(amended, request))
