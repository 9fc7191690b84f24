"""The graded d100's table as data (engine/describe.py): its settings, its modes (attack,
defence, and GM actions on momentum) and the momentum bar between the two sides."""

from __future__ import annotations

from tidetower.engine.describe import Description, Field, Mode, Tracker
from tidetower.engine.systems.graded_d100 import grades as g
from tidetower.engine.systems.graded_d100.fight import ROLL_PARAMS, SETTINGS

ATTACK_PARAMS = (*ROLL_PARAMS, "defender", "undefendable", "kill")
GM_ACTIONS: dict[str, tuple[str, ...]] = {
    "end-turn": (),
    "kill": ("amount",),
    "ally-falls": ("amount",),
    "momentum": ("amount",),
}
MODE_PARAMS: dict[str, tuple[str, ...]] = {
    "attack": ATTACK_PARAMS,
    "defence": (*ROLL_PARAMS, "defender"),
    **GM_ACTIONS,
}
SIDELESS = ("end-turn",)
"""Modes that need no side; every other names the roller's (or the gaining) side."""

_RANK = "a letter D..SSS, or rank points"
_FIELDS = (
    Field("side", "Side", "side", help="the roller's side, or the side whose momentum moves"),
    Field("chance", "Hit chance", minimum=0, maximum=100, help="given outright, in percent"),
    Field("base", "Base", "choice", tuple(g.BASE), help="none: hero or enemy by side"),
    Field("tactics", "Tactics", "choice", tuple(g.TACTICS), "standard"),
    Field("risk", "Risk", "choice", tuple(g.RISK), "safe"),
    Field("target", "Target", "choice", tuple(g.TARGET), "standard"),
    Field("gap", "Rank gap", default=0, help="in points; the modifier is kept to -10..+12"),
    Field("rank", "Rank", "choice", tuple(g.RANKS), help=_RANK),
    Field("target_rank", "Target rank", "choice", tuple(g.RANKS), help=_RANK),
    Field("spent", "Reserves spent", default=0, minimum=0, maximum=100, help="in percent"),
    Field("defender", "Defender", "text", help="who meets the attack (or rolls the defence)"),
    Field("undefendable", "Undefendable", "flag", default=False),
    Field("kill", "Kill", "flag", default=False, help=f"the attack kills: +{g.KILL} momentum"),
    Field("amount", "Momentum", minimum=-10, maximum=10, help="none: the action's own"),
)


def _mode(name: str, params: tuple[str, ...]) -> Mode:
    """A mode of MODE_PARAMS, with `side` where it needs one; GM actions throw nothing."""
    shared = () if name in SIDELESS else ("side",)
    return Mode(name, (*shared, *params), throws=name not in GM_ACTIONS)


DESCRIPTION = Description(
    title="Graded d100 (seed 004)",
    setup="Start the fight",
    tracker=Tracker("two-sided", "momentum", end="{side} momentum", position="Momentum"),
    settings=SETTINGS,
    fields=_FIELDS,
    modes=tuple(_mode(name, params) for name, params in MODE_PARAMS.items()),
    default_mode="attack",
)
