"""The battle rhythm's table as data (engine/describe.py): its settings, its modes (GM
actions on the Count clock, and attacks) and the Count it tracks.

`mobility` (each character's Mobility) is a setting too, read by system.rhythm_from: a
mapping of names to whole numbers, or a list of "Name:N" as a terminal types it.
"""

from __future__ import annotations

from tidetower.engine.describe import Description, Field, Mode, Tracker
from tidetower.engine.systems.battle_rhythm.attack import ATTACK_PARAMS
from tidetower.engine.systems.battle_rhythm.rhythm import LOT_CASTERS, DeclareOrder

MODE_PARAMS: dict[str, tuple[str, ...]] = {
    "declare": ("action", "effort", "starts_at", "alongside"),
    "abandon": ("action",),
    "advance": ("counts",),
    "rewind": (),
    "attack": ATTACK_PARAMS,
}
THROWS = ("attack",)
"""The modes that throw dice; the others are GM actions with an empty tray."""
ORDERS: tuple[DeclareOrder, ...] = ("mobility", "free")

_FIELDS = (
    Field("action", "Action", "text", help="what is declared (or abandoned)"),
    Field("effort", "Effort", minimum=1, help="Counts until it resolves"),
    Field("starts_at", "Starts at", minimum=1, help="a later first Count, before any resolves"),
    Field("alongside", "Alongside", "flag", default=False, help="keep the actor's other actions"),
    Field("counts", "Counts", minimum=1, help="how far to advance; none: to the next action"),
    Field("offense", "Offense", default=0),
    Field("defense", "Defense", help="none: the target makes no Defensive Maneuver"),
    Field("casters", "Lots cast by", "choice", tuple(LOT_CASTERS), "attacker"),
)
_SETTINGS = (
    Field("mobility", "Mobility", "names", default=(), help="Name:N for each character"),
    Field("declare_order", "Declaration order", "choice", ORDERS, "mobility"),
)
DESCRIPTION = Description(
    title="Battle rhythm (seed 003)",
    setup="Start the battle",
    tracker=Tracker("count", "the Count", position="Count"),
    settings=_SETTINGS,
    fields=_FIELDS,
    modes=tuple(Mode(m, fields, m in THROWS) for m, fields in MODE_PARAMS.items()),
    default_mode="attack",
)
