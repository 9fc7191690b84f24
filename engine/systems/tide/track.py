"""The Tide (seed 000): one shared bar between side A's collapse (0) and side B's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from tidetower.engine.rules import Motion, RuleError, Side, other_side

Size = Literal["small-skirmish", "skirmish", "battle"]
Footing = Literal["equal", "slight-a", "slight-b", "severe-a", "severe-b"]

SIZES: tuple[Size, ...] = get_args(Size)
FOOTINGS: tuple[Footing, ...] = get_args(Footing)
MARKS_PER_STEP: dict[Size, int] = {"small-skirmish": 1, "skirmish": 2, "battle": 3}
SIZE_NAMES: dict[Size, str] = {
    "small-skirmish": "Small skirmish",
    "skirmish": "Skirmish",
    "battle": "Battle",
}
OMEN_DIE_SIDES = 20


def _band_width(size_index: int) -> int:
    """Faces in one equal-footing Omen band: 1 at Small skirmish, 2 at Skirmish, 3 at Battle."""
    return max(size_index, 0) + 1


def _pressure(footing: Footing) -> tuple[Side | None, int]:
    """The side under pressure and how many tier steps (N) it is behind."""
    if footing == "equal":
        return None, 0
    level, side = footing.split("-")
    return ("a" if side == "a" else "b"), (1 if level == "slight" else 2)


def _check_omen(face: int) -> None:
    if not isinstance(face, int) or isinstance(face, bool) or not 1 <= face <= OMEN_DIE_SIDES:
        raise RuleError(f"an Omen is a d20 face 1..20, got {face!r}", field="dice")


def _check_choice(value: str, choices: tuple[str, ...], what: str) -> None:
    if value not in choices:
        raise RuleError(
            f"unknown {what} {value!r}: expected one of {', '.join(choices)}", field=what
        )


@dataclass
class TideTrack:
    """The shared pressure track of a collective contest, and where its marker stands."""

    weight_a: int
    weight_b: int
    size: Size
    footing: Footing = "equal"
    position: int | None = None
    last_motion: Motion | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for name in ("weight_a", "weight_b"):
            weight = getattr(self, name)
            if not isinstance(weight, int) or isinstance(weight, bool) or weight < 1:
                raise RuleError(
                    f"{name} must be a whole number of at least 1, got {weight!r}", field=name
                )
        if self.weight_b == 1:
            raise RuleError(
                "weight_b must be at least 2: with weight_b = 1 the marker would "
                "start on side B's collapse (start = weight_a = track length)",
                field="weight_b",
            )
        _check_choice(self.size, SIZES, "size")
        _check_choice(self.footing, FOOTINGS, "footing")
        if self.position is None:
            self.position = self.weight_a
        if not 0 <= self.position <= self.length:
            raise RuleError(f"position {self.position} is off the track 0..{self.length}")

    @property
    def length(self) -> int:
        """Track length: weight_a + weight_b - 1."""
        return self.weight_a + self.weight_b - 1

    @property
    def marker(self) -> int:
        """Where the marker stands (position, typed as always set)."""
        assert self.position is not None
        return self.position

    @property
    def marks_per_step(self) -> int:
        """Marks of margin needed to move the bar one step at this size."""
        return MARKS_PER_STEP[self.size]

    @property
    def routed(self) -> Side | None:
        """The side that has routed, once the marker reached its collapse end."""
        if self.marker == 0:
            return "a"
        if self.marker == self.length:
            return "b"
        return None

    def omen_faces(self) -> dict[str, list[int]]:
        """d20 faces that push the marker toward A's collapse ("a") and B's ("b")."""
        size_index = SIZES.index(self.size)
        pressed, tiers_behind = _pressure(self.footing)
        widths = {"a": _band_width(size_index), "b": _band_width(size_index)}
        if pressed is not None:
            # The side under pressure keeps its bad band; its good band shrinks N sizes.
            widths[other_side(pressed)] = _band_width(size_index - tiers_behind)
        return {
            "a": list(range(1, widths["a"] + 1)),
            "b": list(range(OMEN_DIE_SIDES - widths["b"] + 1, OMEN_DIE_SIDES + 1)),
        }

    def steps_for(self, margin: int) -> int:
        """Tide steps a Marks margin is worth at this size: floor(margin / Marks per step)."""
        return max(margin, 0) // self.marks_per_step

    def move(self, steps: int, cause: str) -> Motion | None:
        """Move the marker `steps` (+ toward B's collapse), stopping at the ends."""
        if steps == 0 or self.routed is not None:
            return None
        after = min(max(self.marker + steps, 0), self.length)
        motion = Motion(cause=cause, before=self.marker, after=after)
        self.position = after
        self.last_motion = motion
        return motion

    def apply_omen(self, face: int) -> Motion | None:
        """Move one step if the d20 Omen `face` is in a band, else nothing."""
        _check_omen(face)
        bands = self.omen_faces()
        if face in bands["a"]:
            return self.move(-1, f"omen {face} toward A's collapse")
        if face in bands["b"]:
            return self.move(+1, f"omen {face} toward B's collapse")
        return None

    def exchange(self, winner: Side | None, margin: int, omen: int | None = None) -> list[Motion]:
        """A Tide-linked opposed exchange: margin steps toward the loser's collapse, then Omen."""
        if winner not in ("a", "b", None):
            raise RuleError(f"winner must be 'a' or 'b', got {winner!r}")
        if not isinstance(margin, int) or margin < 0 or (winner is None and margin):
            raise RuleError(f"margin must be a whole number >= 0 for the winner, got {margin!r}")
        if omen is not None:
            _check_omen(omen)
        motions: list[Motion] = []
        steps = self.steps_for(margin)
        if winner is not None and steps:
            loser = other_side(winner)
            cause = (
                f"margin {margin} ÷ {self.marks_per_step} = {steps} "
                f"step{'s' if steps > 1 else ''} toward {loser.upper()}'s collapse"
            )
            motion = self.move(steps if winner == "a" else -steps, cause)
            motions += [motion] if motion else []
        if omen is not None:
            motion = self.apply_omen(omen)
            motions += [motion] if motion else []
        return motions
