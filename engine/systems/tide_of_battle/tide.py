"""The Tide of Battle (seed 001): a signed lean toward one side, and what shifts it.

The tide favours one side by some steps or is Neutral; it has no maximum. Sides are
"a", "b" (and "c", "d", … when a battle truly has more than two sides: only one side
is favoured at a time). A shift toward a side first wears down whoever is favoured,
passes through Neutral, then favours the new side (seed: 2 → 1 → 0 → +1).
Every change takes a BattleTide and returns a new one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from string import ascii_lowercase

from tidetower.engine import params as p
from tidetower.engine.rules import JSONValue, Motion, RuleError

SURROUNDED = 4  # 5:1 or more: the largest superior-numbers shift


@dataclass(frozen=True)
class Roster:
    """Who fights on one side, for superior numbers: complex monsters count as 2,
    a legendary monster as many as the opponents it faces (their headcount)."""

    plain: int = 0
    complex: int = 0
    legendary: int = 0

    def __post_init__(self) -> None:
        for name in ("plain", "complex", "legendary"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise RuleError(
                    f"{name} creatures must be a whole number >= 0, got {value!r}", field="numbers"
                )

    @property
    def heads(self) -> int:
        """Creatures on the side, each counted once."""
        return self.plain + self.complex + self.legendary

    def count(self, opponents: Roster) -> int:
        """Combatants for the ratio: plain 1, complex 2, legendary = opposing headcount."""
        return self.plain + 2 * self.complex + self.legendary * opponents.heads


def numbers_shift(a: Roster, b: Roster) -> tuple[int | None, int]:
    """Superior numbers: (favoured side index, steps); 2:1 → 1, 3:1 → 2, …, 5:1+ → 4."""
    count_a, count_b = a.count(b), b.count(a)
    big, small = max(count_a, count_b), min(count_a, count_b)
    if big == 0:
        return None, 0
    steps = SURROUNDED if small == 0 else min(big // small - 1, SURROUNDED)
    if steps <= 0:
        return None, 0
    return (0 if count_a > count_b else 1), steps


@dataclass(frozen=True)
class Demoralised:
    """A creature below zero morale, and the side it fights on."""

    name: str
    side: int
    favoured: int


@dataclass(frozen=True)
class BattleTide:
    """The Tide of Battle: which side it favours and by how many steps (no maximum)."""

    sides: tuple[str, ...] = ("A", "B")
    favoured: int | None = None
    steps: int = 0
    numbers: tuple[int | None, int] = (None, 0)
    demoralised: tuple[Demoralised, ...] = ()
    span: int = 5
    last_motion: Motion | None = None

    def __post_init__(self) -> None:
        if len(self.sides) < 2 or len(self.sides) > len(ascii_lowercase):
            raise RuleError(f"a battle needs 2..26 sides, got {len(self.sides)}", field="sides")
        if self.steps < 0 or (self.steps == 0) != (self.favoured is None):
            raise RuleError(f"steps {self.steps} do not fit favoured side {self.favoured!r}")

    def bonus(self, side: int) -> int:
        """The bonus to attack rolls and defences of the side at index `side`."""
        return self.steps if self.favoured == side else 0

    @property
    def signed(self) -> int:
        """Two sides: -steps when A is favoured, +steps when B is, 0 when Neutral."""
        return -self.steps if self.favoured == 0 else self.steps

    def describe(self) -> str:
        """The tide as the table says it: "Neutral" or "A +2"."""
        if self.favoured is None:
            return "Neutral"
        return f"{self.sides[self.favoured]} +{self.steps}"

    def side_index(self, side: str, field: str = "side") -> int:
        """Index of side id "a", "b", …, or a RuleError naming the sides (and `field`,
        the param or setting that named it)."""
        ids = ascii_lowercase[: len(self.sides)]
        if not isinstance(side, str) or len(side) != 1 or side not in ids:
            raise RuleError(f"unknown side {side!r}: sides are {', '.join(ids)}", field=field)
        return ids.index(side)


def _moved(tide: BattleTide, favoured: int | None, steps: int) -> tuple[int | None, int]:
    """Where the tide lands after `steps` toward `favoured`, through Neutral if need be."""
    assert favoured is not None
    if tide.favoured in (None, favoured):
        return favoured, tide.steps + steps
    if steps <= tide.steps:
        left = tide.steps - steps
        return (tide.favoured if left else None), left
    return favoured, steps - tide.steps


def shift(tide: BattleTide, toward: int, steps: int, cause: str) -> BattleTide:
    """The tide after shifting `steps` in favour of side index `toward`."""
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise RuleError(f"steps must be a whole number >= 0, got {steps!r}", field="steps")
    if not 0 <= toward < len(tide.sides):
        raise RuleError(f"no side at index {toward}")
    if steps == 0:
        return tide
    favoured, after = _moved(tide, toward, steps)
    moved = dataclasses.replace(tide, favoured=favoured, steps=after)
    motion = Motion(
        f"{cause}: {steps} step{'s' * (steps > 1)} toward {tide.sides[toward]}",
        position(tide),
        position(moved),
    )
    return dataclasses.replace(moved, last_motion=motion)


def walk(tide: BattleTide, toward: int, steps: int) -> list[str]:
    """The tide after each single step of a shift, starting where it stands (seed 001)."""
    path = [tide.describe()]
    for _ in range(steps):
        tide = shift(tide, toward, 1, "step")
        path.append(tide.describe())
    return path


def position(tide: BattleTide) -> int:
    """The marker's place on the bar: signed for two sides, -steps toward the favoured else."""
    return tide.signed if len(tide.sides) == 2 else -tide.steps


def two_sides(tide: BattleTide, what: str, field: str) -> None:
    """Refuse `what`, naming `field` (what would let it work with more sides), unless the
    battle has exactly two sides."""
    if len(tide.sides) != 2:
        raise RuleError(
            f"{what} needs exactly two sides; lump allies into one side "
            "(seed 001) or shift the tide by hand",
            field=field,
        )


def recount(tide: BattleTide, a: Roster, b: Roster) -> BattleTide:
    """Segment 0 recount: shift by the change in the superior-numbers steps."""
    two_sides(tide, "superior numbers", "numbers")
    old_side, old_steps = tide.numbers
    new_side, new_steps = numbers_shift(a, b)
    delta = _signed(new_side, new_steps) - _signed(old_side, old_steps)
    moved = dataclasses.replace(tide, numbers=(new_side, new_steps))
    if delta == 0:
        return moved
    return shift(moved, 1 if delta > 0 else 0, abs(delta), "recount of superior numbers")


def _signed(side: int | None, steps: int) -> int:
    return 0 if side is None else (steps if side == 1 else -steps)


def demoralise(tide: BattleTide, name: str, side: int, favour: int | None = None) -> BattleTide:
    """A creature drops below zero morale: one step to the opposing side."""
    if any(d.name == name for d in tide.demoralised):
        raise RuleError(f"{name} is already demoralised", field="creature")
    if favour is None:
        two_sides(tide, "demoralisation without naming the side it favours", "favour")
        favour = 1 - side
    if favour == side:
        raise RuleError(
            "demoralisation favours the opposing side, not the creature's own", field="favour"
        )
    moved = shift(tide, favour, 1, f"{name} demoralised")
    return dataclasses.replace(
        moved, demoralised=(*tide.demoralised, Demoralised(name, side, favour))
    )


def restore(tide: BattleTide, name: str) -> BattleTide:
    """A demoralised creature's morale is restored: the tide shifts back by one."""
    found = next((d for d in tide.demoralised if d.name == name), None)
    if found is None:
        raise RuleError(f"{name} is not demoralised", field="creature")
    moved = shift(tide, found.side, 1, f"{name}'s morale restored")
    return dataclasses.replace(
        moved, demoralised=tuple(d for d in tide.demoralised if d.name != name)
    )


def as_whole(value: JSONValue) -> JSONValue:
    """A whole number typed as text ("13", "-2", as a terminal's list gives it) as one;
    any other value as it is."""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return value


def _roster(value: JSONValue, what: str) -> Roster:
    value = as_whole(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return Roster(plain=value)
    if not isinstance(value, Mapping):
        raise RuleError(
            f"{what} must be a head count or {{plain, complex, legendary}}, got {value!r}",
            field="numbers",
        )
    try:
        p.check_keys(value, ("plain", "complex", "legendary"), f"{what} field(s)")
        counts = {k: p.whole(value, k) for k in value}
    except RuleError as error:  # a roster's own key is not one the GM sets: numbers is
        raise RuleError(str(error), field="numbers") from None
    return Roster(**counts)


def rosters(value: JSONValue) -> tuple[Roster, Roster]:
    """The two sides' rosters from [a, b] (each a head count or a mapping)."""
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2:
        raise RuleError(f"numbers must list two sides' rosters, got {value!r}", field="numbers")
    return _roster(value[0], "numbers for side a"), _roster(value[1], "numbers for side b")


def _side_list(value: JSONValue, tide: BattleTide, what: str) -> list[int]:
    if value is None:
        return []
    listed = [value] if isinstance(value, str) else value
    if not isinstance(listed, list | tuple):
        raise RuleError(f"{what} must be a side id or a list of them, got {value!r}", field=what)
    return [tide.side_index(s, what) for s in listed]


def _from_morale(tide: BattleTide, given: JSONValue) -> BattleTide:
    """Start toward the side with the highest morale, by its lead over the next side."""
    morale = [as_whole(m) for m in given] if isinstance(given, list | tuple) else given
    if (
        not isinstance(morale, list | tuple)
        or len(morale) != len(tide.sides)
        or not all(isinstance(m, int) and not isinstance(m, bool) for m in morale)
    ):
        raise RuleError(
            f"morale must list one whole number per side ({len(tide.sides)}), got {morale!r}",
            field="morale",
        )
    ranked = sorted(range(len(morale)), key=lambda i: morale[i], reverse=True)
    lead = morale[ranked[0]] - morale[ranked[1]]
    return shift(tide, ranked[0], lead, "highest morale")


def _from_surprise(tide: BattleTide, surprised: list[int]) -> BattleTide:
    """Each surprised side shifts the tide 1 toward the unsurprised side."""
    awake = [i for i in range(len(tide.sides)) if i not in surprised]
    if not surprised or not awake:
        return tide
    if len(awake) > 1:
        raise RuleError(
            "surprise with several unsurprised sides: shift the tide by hand", field="surprised"
        )
    return shift(tide, awake[0], len(set(surprised)), "surprise")


SETTING_KEYS = ("sides", "morale", "home", "surprised", "numbers", "span")
"""declare.py describes each of these settings (a test checks they agree)."""


def start(settings: Mapping[str, JSONValue]) -> BattleTide:
    """The tide at the start of battle: morale, home ground, surprise, superior numbers."""
    p.check_keys(settings, SETTING_KEYS, "Tide of Battle setting(s)")
    labels = settings.get("sides", ["A", "B"])
    if not isinstance(labels, list | tuple) or not all(isinstance(s, str) and s for s in labels):
        raise RuleError(f"sides must be a list of names, got {labels!r}", field="sides")
    tide = BattleTide(tuple(labels), span=p.whole(settings, "span", 5, minimum=1, maximum=30))
    if settings.get("morale"):  # none or empty, as a set-up form leaves it: no morale
        tide = _from_morale(tide, settings["morale"])
    for home in _side_list(settings.get("home"), tide, "home"):
        tide = shift(tide, home, 1, "home ground")
    tide = _from_surprise(tide, _side_list(settings.get("surprised"), tide, "surprised"))
    if settings.get("numbers"):
        tide = recount(tide, *rosters(settings["numbers"]))
    return dataclasses.replace(tide, last_motion=None)
