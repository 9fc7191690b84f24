"""Reading a pool of tier dice (the d6 / d8 / d12 ladder) as Marks.

Seed 000 reads every pool as Marks but never says how a face becomes a Mark, so the
rule is a table setting (docs/engine.md):

- ``threshold`` (default): each die showing ``threshold`` (5) or more is one Mark.
  One die gives a Mark 1/3 of the time on a d6, 1/2 on a d8, 2/3 on a d12.
- ``step``: each die gives ``face // step`` Marks (step 4): a d6 gives 0-1, a d8 0-2,
  a d12 0-3, so a big die can carry a roll on its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, get_args

from tidetower.engine.chances import convolve
from tidetower.engine.dice import DieError, DieKind
from tidetower.engine.rules import RuleError

TIERS: tuple[DieKind, ...] = (DieKind.D6, DieKind.D8, DieKind.D12)
MarksKind = Literal["threshold", "step"]
"""How a face scores: at or over a threshold scores one Mark, or one Mark per step."""
MARKS_KINDS: tuple[MarksKind, ...] = get_args(MarksKind)


@dataclass(frozen=True)
class MarksRule:
    """How one tier die's face becomes Marks; a table setting."""

    kind: MarksKind = "threshold"
    threshold: int = 5
    step: int = 4

    def __post_init__(self) -> None:
        if self.kind not in MARKS_KINDS:
            raise RuleError(
                f"marks rule must be 'threshold' or 'step', got {self.kind!r}", field="marks_rule"
            )
        if not isinstance(self.threshold, int) or not 2 <= self.threshold <= 6:
            raise RuleError(
                f"marks threshold must be 2..6 (a d6 must be able to score), got {self.threshold}",
                field="marks_threshold",
            )
        if not isinstance(self.step, int) or not 2 <= self.step <= 6:
            raise RuleError(f"marks step must be 2..6, got {self.step}", field="marks_step")

    def marks_for_face(self, face: int) -> int:
        """Marks one die showing `face` is worth."""
        if self.kind == "threshold":
            return 1 if face >= self.threshold else 0
        return face // self.step


def check_tier(kind: DieKind) -> DieKind:
    """`kind` if it is a tier die (d6, d8, d12), else a DieError."""
    if kind not in TIERS:
        raise DieError(f"{kind.value} is not a tier die: Marks pools use d6, d8 or d12")
    return kind


def read_marks(faces: Iterable[int], rule: MarksRule = MarksRule()) -> int:
    """The Marks shown by a pool's faces."""
    return sum(rule.marks_for_face(face) for face in faces)


def die_distribution(tier: DieKind, rule: MarksRule = MarksRule()) -> dict[int, Fraction]:
    """Exact chance of each Marks count from one die of `tier`."""
    check_tier(tier)
    sides = tier.sides
    dist: dict[int, Fraction] = {}
    for face in range(1, sides + 1):
        marks = rule.marks_for_face(face)
        dist[marks] = dist.get(marks, Fraction(0)) + Fraction(1, sides)
    return dist


def pool_distribution(
    dice: int, tier: DieKind, rule: MarksRule = MarksRule()
) -> dict[int, Fraction]:
    """Exact chance of each Marks total from `dice` dice of `tier`."""
    if dice < 0:
        raise DieError(f"a Marks pool cannot have {dice} dice")
    total: dict[int, Fraction] = {0: Fraction(1)}
    one = die_distribution(tier, rule)
    for _ in range(dice):
        total = convolve(total, one)
    return dict(sorted(total.items()))
