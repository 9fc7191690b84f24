"""Which dice keep a throw from fitting the rules: the ones the GM is asked about.

A throw the rules refuse (a pool declared as d8 with a die read as a d6) is never dropped:
the read loop asks the GM about the dice whose kind alone keeps it from fitting, and the GM
types those, throws again or changes the declaration. Pure: the state and the roll in, the
camera dice's places out.
"""

from __future__ import annotations

import dataclasses

from tidetower.engine.dice import Die, DieError, DieKind, Roll
from tidetower.engine.rules import RuleError
from tidetower.engine.session import SessionState, record_roll
from tidetower.engine.systems import get_system


def fits(state: SessionState, roll: Roll) -> bool:
    """True when the rules take `roll` as the table stands (its declaration, its tracker)."""
    bare = tuple(dataclasses.replace(die, read=()) for die in roll.dice)
    try:
        record_roll(state, dataclasses.replace(roll, dice=bare))
    except (RuleError, DieError):
        return False
    return True


def declared_kinds(state: SessionState) -> frozenset[DieKind]:
    """The kinds the declared roll says to throw (none where it leaves them to the player)."""
    system = get_system(state.system)
    return frozenset(system.declared_dice(state.tracker, state.declared) or ())


def doubted(state: SessionState, roll: Roll) -> tuple[int, ...]:
    """The camera dice (places in the reading) of each die whose kind alone keeps `roll` from
    fitting: as another kind the throw shows or the declaration names, it fits. The face is
    the GM's to type, so only the kind is tried (a face too high for it taken as its top)."""
    if fits(state, roll):
        return ()
    kinds = {die.kind for die in roll.dice} | declared_kinds(state)
    out: list[int] = []
    for place, die in enumerate(roll.dice):
        if any(fits(state, _as(roll, place, kind)) for kind in sorted(kinds - {die.kind})):
            out.extend(die.read)
    return tuple(sorted(out))


def _as(roll: Roll, place: int, kind: DieKind) -> Roll:
    """`roll` with its die at `place` taken as a `kind` showing the nearest face it can."""
    die = roll.dice[place]
    dice = list(roll.dice)
    dice[place] = Die(kind, min(die.face, kind.sides), die.read)
    return dataclasses.replace(roll, dice=tuple(dice))
