"""The Tide of Battle's table as data (engine/describe.py): its settings, its modes (an
attack, and the GM actions that shift the tide) and the bar between the sides, whose ends
are the sides' own names (the seed's "Monsters +2")."""

from __future__ import annotations

from tidetower.engine.describe import Description, Field, Mode, Tracker

MODE_PARAMS: dict[str, tuple[str, ...]] = {
    "attack": ("side", "attack", "defence", "target"),
    "shift": ("side", "steps", "cause"),
    "recount": ("numbers",),
    "demoralise": ("side", "creature", "favour"),
    "restore": ("creature",),
}
THROWS = ("attack",)
"""The modes that throw dice; the others are GM actions with an empty tray."""

_SIDE_ID = "a side id: a, b (c, … for more sides)"
_NUMBERS = "per side a head count, e.g. 13,4"
_FIELDS = (
    Field("side", "Side", "side", help=f"the acting side; params side takes {_SIDE_ID}"),
    Field("attack", "Attack bonus", default=0, help="added to the faces and the tide's bonus"),
    Field("defence", "Defence", help="with the target's tide bonus; none: no hit or miss"),
    Field("target", "Target side", "text", help=f"{_SIDE_ID}; none: the other side"),
    Field("steps", "Steps", default=1, minimum=0),
    Field("cause", "Cause", "text", default="shift"),
    Field("numbers", "Numbers", "names", help=_NUMBERS),
    Field("creature", "Creature", "text", help="none: the actor"),
    Field("favour", "Favours", "text", help=f"{_SIDE_ID}; needed with three or more sides"),
)
_SETTINGS = (
    Field("sides", "Sides", "names", default=("A", "B"), help="each side's name, 2 to 26"),
    Field("morale", "Morale", "names", default=(), help="one whole number per side, e.g. 3,1"),
    Field("home", "Home ground", "names", default=(), help="side ids: a, b, …"),
    Field("surprised", "Surprised", "names", default=(), help="side ids: a, b, …"),
    Field("numbers", "Numbers", "names", default=(), help=_NUMBERS),
    Field("span", "Bar half-width", default=5, minimum=1, maximum=30),
)
DESCRIPTION = Description(
    title="Tide of Battle (seed 001)",
    setup="Start the battle",
    tracker=Tracker("two-sided", "the Tide of Battle", end="{side}", position="Tide"),
    settings=_SETTINGS,
    fields=_FIELDS,
    modes=tuple(Mode(m, fields, m in THROWS) for m, fields in MODE_PARAMS.items()),
    default_mode="attack",
)
