"""The tower's buttons: each press is a GM command, applied by the same desk as MQTT's."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable

from tidetower.engine.rules import RollContext
from tidetower.engine.table import Table
from tidetower.firmware.devices import TowerDevices
from tidetower.mqtt.commands import CommandDesk, Refused, declare_command
from tidetower.mqtt.payloads import Command, RereadCommand, UndoCommand

log = logging.getLogger(__name__)

Amend = Callable[[RollContext], RollContext]
AMENDS: dict[str, Amend] = {
    "side_a": lambda declared: dataclasses.replace(declared, side="a"),
    "side_b": lambda declared: dataclasses.replace(declared, side="b"),
    "link": lambda declared: dataclasses.replace(declared, tide_linked=not declared.tide_linked),
}
"""Buttons that change the declared roll: side A, side B, Tide-linked or personal."""
PLAIN: dict[str, Callable[[str], Command]] = {
    "undo": lambda request: UndoCommand(id=request),
    "reread": lambda request: RereadCommand(id=request),
}
"""Buttons that are a command of their own."""


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
        if name in PLAIN:  # the read loop's own lock, never under the table's
            self.desk.apply(PLAIN[name](request))
            return
        with self.table.lock:  # the declared roll read and amended in one step
            self.desk.apply(declare_command(AMENDS[name](self.table.state.declared), request))
