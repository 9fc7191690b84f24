"""Is this die fair? Each die's faces counted, a chi-squared test against a fair die, and
how many throws would tell a small bias: pure, dataclasses in and out, no I/O.

A die is attributed to the physical die its reading names (`DieRead.named`): a taught die
by its profile's name ("white omen"), else by its colour and kind ("red d20"); a die read
with no name counts under its kind ("d20"), the camera's kinds: a d100 is its tens d10
("d10-tens", faces 00..90) and its units d10 ("d10", faces 0..9) counted as two dice, and a
d10 shows 0..9 as the camera reads it (the rules' 10 is 0). Dice the GM typed or corrected
count as what was entered, marked typed: a corrected die keeps the name of the camera die it
corrected, a die typed in whole has none.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from tidetower.engine.rules import RollRecord
from tidetower.engine.tray import DIE_NAMES, TENS_D10, camera_faces

ALPHA = 0.05
"""The test's level: a die is called biased when a fair one would look this odd 1 time in 20."""
POWER = 0.8
"""The chance the throws-needed figure gives of catching the bias it names."""
BIAS = 0.1
"""The bias the throws-needed figure is for: one face 10 % likelier than a fair die's."""
MIN_EXPECTED = 5.0
"""Below this many expected throws per face the chi-squared figure cannot be trusted."""
TOO_FEW = "too few throws to tell"
NO_SIGN = "no sign of bias at 5 %"

_EPS = 1e-15
_TINY = 1e-300


def _gamma_series(a: float, x: float) -> float:
    """The regularized lower incomplete gamma P(a, x) by its power series (x < a + 1)."""
    term = total = 1.0 / a
    n = a
    for _ in range(10_000):
        n += 1.0
        term *= x / n
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_fraction(a: float, x: float) -> float:
    """The regularized upper incomplete gamma Q(a, x) by its continued fraction (Lentz)."""
    b = x + 1.0 - a
    c, d = 1.0 / _TINY, 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        h *= d * c
        if abs(d * c - 1.0) < _EPS:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def gamma_q(a: float, x: float) -> float:
    """The regularized upper incomplete gamma function Q(a, x) = Γ(a, x) / Γ(a)."""
    if x <= 0.0:
        return 1.0
    if x < a + 1.0:
        return 1.0 - _gamma_series(a, x)
    return _gamma_fraction(a, x)


def chi2_sf(chi2: float, df: int) -> float:
    """The chance a chi-squared variable of `df` degrees of freedom is at least `chi2`."""
    return gamma_q(df / 2.0, chi2 / 2.0)


def chi2_critical(df: int, alpha: float = ALPHA) -> float:
    """The chi-squared value a fair die exceeds with chance `alpha` (bisection of chi2_sf)."""
    low, high = 0.0, df + 100.0 * math.sqrt(df) + 100.0
    for _ in range(80):
        mid = (low + high) / 2.0
        low, high = (mid, high) if chi2_sf(mid, df) > alpha else (low, mid)
    return (low + high) / 2.0


def ncx2_sf(x: float, df: int, lam: float) -> float:
    """The chance a noncentral chi-squared variable (df, noncentrality `lam`) exceeds `x`:
    central tails weighted by the Poisson(lam / 2) terms of its mixture."""
    half = lam / 2.0
    top = int(half + 12.0 * math.sqrt(half) + 40.0)
    total = 0.0
    for j in range(top + 1):
        weight = (
            math.exp(-half + j * math.log(half) - math.lgamma(j + 1)) if half else float(j == 0)
        )
        total += weight * gamma_q(df / 2.0 + j, x / 2.0)
    return total


@lru_cache(maxsize=64)
def throws_needed(
    faces: int, bias: float = BIAS, alpha: float = ALPHA, power: float = POWER
) -> int:
    """Throws a chi-squared test at `alpha` needs to catch, with chance `power`, one face
    `bias` likelier than fair (the others equally less likely): Cohen's effect size
    w² = bias² / (faces - 1) and the noncentral chi-squared with noncentrality n·w²."""
    df = faces - 1
    critical = chi2_critical(df, alpha)
    low, high = 0.0, 1000.0
    for _ in range(50):
        mid = (low + high) / 2.0
        low, high = (mid, high) if ncx2_sf(critical, df, mid) < power else (low, mid)
    return math.ceil(high / (bias * bias / df))


class Counted(NamedTuple):
    """One die of one throw as stats counts it: its kind, its face, and the physical die it
    is attributed to when the reader named one (a tuple, not a dataclass: a year holds some
    50,000 of them)."""

    kind: str
    face: int
    typed: bool = False
    """Entered or corrected by the GM: it counts as entered, marked so."""
    named: str = ""
    """The physical die (`DieRead.named`): "white omen", "red d20"; empty: its kind only."""

    @property
    def name(self) -> str:
        """The die it counts for: its name where the reader told one, else its kind."""
        return self.named or self.kind


def typed_whole(kind: str, face: int) -> tuple[Counted, ...]:
    """A die the GM typed whole (no camera dice), as the camera would count it: a d100 as
    its tens and units d10s, a d10's 10 as 0."""
    if kind == "d100":
        return (Counted(TENS_D10, face % 100 // 10 * 10, True), Counted("d10", face % 10, True))
    return (Counted(kind, face % 10 if kind == "d10" else face, True),)


Read = tuple[str, int, bool, str]
"""A camera die as stats takes it: kind, face, typed, name."""


def _counted(kind: str, face: int, reads: Sequence[Read]) -> tuple[Counted, ...]:
    """One rules die as counted: the camera dice it was read from, else as typed whole."""
    if not reads:
        return typed_whole(kind, face)
    return tuple(Counted(die, value, typed, named) for die, value, typed, named in reads)


def dice_of(record: RollRecord) -> tuple[Counted, ...]:
    """Every die a recorded throw counts: the camera dice its rules dice were read from."""
    reading = record.reading or ()
    out: list[Counted] = []
    for die in record.roll.dice:
        reads = [
            (reading[i].die, reading[i].value, reading[i].typed, reading[i].named) for i in die.read
        ]
        out.extend(_counted(die.kind.value, die.face, reads))
    return tuple(out)


def dice_of_body(body: Mapping[str, Any]) -> tuple[Counted, ...]:
    """`dice_of` straight from a stored record's JSON (schema 2 on: each die has `read`),
    skipping the full load for speed; a body of another shape raises KeyError or TypeError."""
    reading = body.get("reading") or ()
    out: list[Counted] = []
    for die in body["roll"]["dice"]:
        reads = [_raw_read(reading[i]) for i in die["read"]]
        out.extend(_counted(str(die["kind"]), int(die["face"]), reads))
    return tuple(out)


def _raw_read(item: Mapping[str, Any]) -> Read:
    """A stored camera die's kind, face, whether the GM typed it, and its name (none in a
    reading stored before the reader named dice)."""
    return (
        str(item["die"]),
        int(item["value"]),
        bool(item.get("typed", False)),
        str(item.get("named") or ""),
    )


@dataclass(frozen=True)
class DieSummary:
    """One die's throws and what they say about its fairness."""

    name: str
    """The die: its name where the reader told one ("white omen", "red d20"), else its kind."""
    kind: str
    faces: tuple[int, ...]
    counts: tuple[int, ...]
    typed: int
    """How many of its throws the GM typed or corrected."""
    chi2: float
    p: float
    needed: int
    """Throws that would catch a 10 % bias on one face (5 % level, 80 % power)."""

    @property
    def throws(self) -> int:
        """How many times the die was thrown."""
        return sum(self.counts)

    @property
    def expected(self) -> float:
        """How often a fair die would show each face in as many throws."""
        return self.throws / len(self.faces)

    @property
    def most(self) -> tuple[int, int]:
        """The most frequent face and its count (the lowest such face on a tie)."""
        return max(zip(self.faces, self.counts, strict=True), key=lambda fc: fc[1])

    @property
    def least(self) -> tuple[int, int]:
        """The least frequent face and its count (the lowest such face on a tie)."""
        return min(zip(self.faces, self.counts, strict=True), key=lambda fc: fc[1])

    @property
    def flagged(self) -> bool:
        """Whether the throws are enough to test and a fair die would look this odd < 5 %."""
        return self.expected >= MIN_EXPECTED and self.p < ALPHA

    @property
    def verdict(self) -> str:
        """What the figures say, plainly: a small sample never reads as fair."""
        if self.expected < MIN_EXPECTED:
            return TOO_FEW
        if self.p < ALPHA:
            return f"biased at 5 % (p = {self.p:.2g})"
        return TOO_FEW if self.throws < self.needed else NO_SIGN


def chi2_of(counts: Sequence[int]) -> float:
    """Pearson's chi-squared of face counts against a fair die (0 for no throws)."""
    expected = sum(counts) / len(counts)
    if expected == 0:
        return 0.0
    return sum((c - expected) ** 2 for c in counts) / expected


def summarise(name: str, dice: Sequence[Counted]) -> DieSummary:
    """The summary of one die's throws: `name` a die's name, or a kind for its unnamed ones."""
    mine = Counter(d for d in dice if d.name == name)
    kind = next((d.kind for d in mine), name)
    return summary_of(kind, mine, "" if kind == name else name)


def summary_of(kind: str, tally: Mapping[Counted, int], named: str = "") -> DieSummary:
    """One die's summary (a kind's unnamed dice, or the die `named`) from how often each of
    its (face, typed) came up; faces it cannot show (a damaged store) are left out."""
    faces = camera_faces(kind)
    shown = [tally.get(Counted(kind, f, False, named), 0) for f in faces]
    typed_counts = [tally.get(Counted(kind, f, True, named), 0) for f in faces]
    counts = tuple(a + b for a, b in zip(shown, typed_counts, strict=True))
    chi2 = chi2_of(counts)
    df = len(faces) - 1
    return DieSummary(
        named or kind,
        kind,
        faces,
        counts,
        sum(typed_counts),
        chi2,
        chi2_sf(chi2, df),
        throws_needed(len(faces)),
    )


def summaries(dice: Iterable[Counted], only: str | None = None) -> list[DieSummary]:
    """A summary for each die thrown, each physical die the reader named apart from its
    kind's unnamed dice (or just those `only` names: a die's name, or a kind for all its
    dice), in the order the tower lists kinds, a kind's unnamed dice first."""
    tally = Counter(dice)
    dice_seen = {(d.kind, d.named) for d in tally}
    order = sorted(dice_seen, key=lambda d: (_rank(d[0]), d[1] != "", d[1]))
    return [
        summary_of(kind, tally, named)
        for kind, named in order
        if kind in DIE_NAMES and only in (None, kind, named or kind)
    ]


def _rank(kind: str) -> int:
    """Where a kind stands in the tower's list of dice (one it does not know, last)."""
    return DIE_NAMES.index(kind) if kind in DIE_NAMES else len(DIE_NAMES)
