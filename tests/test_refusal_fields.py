"""Every engine refusal names the input it refuses (RuleError.field), alike on every surface.

A field is a RollContext field (`side`, `pool`), a params or settings key exactly as the GM
types it (`defender`, `home`), `dice` for what the tray shows, or None for a refusal of the
whole request. The scan at the end holds the engine's source to that.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from source_tree import parse_source

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import JSONValue, RollContext, RuleError
from tidetower.engine.session import declare, new_session, record_roll, undo

Step = tuple[RollContext, Roll | None]
"""Declare a context; then, unless the roll is None, record the roll under it."""


def tray(*dice: str) -> Roll:
    """A roll from "d6:3"-style names."""
    return Roll(tuple(Die(DieKind(k), int(v)) for k, v in (d.split(":") for d in dice)))


def ctx(mode: str = "", actor: str = "", side: Any = None, **params: JSONValue) -> RollContext:
    return RollContext(actor=actor, side=side, mode=mode, params=params)


NO_DICE = Roll(())

# (system, settings, steps, field, words): the last step (or the settings) is refused.
CASES: list[tuple[str, Mapping[str, JSONValue], Sequence[Step], str | None, str]] = [
    # tide (seed 000)
    ("tide", {"colour": "red"}, [], "colour", "unknown Tide setting"),
    ("tide", {"weight_b": 1}, [], "weight_b", "weight_b must be at least 2"),
    ("tide", {"size": "duel"}, [], "size", "unknown size 'duel'"),
    ("tide", {"marks_step": 9}, [], "marks_step", "marks step must be 2..6"),
    ("tide", {}, [(RollContext(params={"tide_linked": True}), None)], "side", "needs a side"),
    ("tide", {}, [(RollContext(params={"tier": "d20"}), None)], "tier", "not a tier die"),
    ("tide", {}, [(RollContext(pool=-1), None)], "pool", "pool cannot be negative"),
    ("tide", {}, [(RollContext(reply_to="r9"), None)], "reply_to", "unknown roll 'r9'"),
    (
        "tide",
        {},
        [(RollContext(pool=2, params={"tier": "d8"}), tray("d6:5", "d6:2"))],
        "dice",
        "declared as d8 but the tray shows d6",
    ),
    ("tide", {}, [(RollContext(), tray("d6:5", "d20:1", "d20:20"))], "dice", "only one Omen"),
    (
        "tide",
        {},
        [
            (RollContext(side="a", mode="tide", params={"marks": 2}), NO_DICE),
            (RollContext(side="a", reply_to="t-1", params={"marks": 1}), NO_DICE),
        ],
        "side",
        "must come from the other side",
    ),
    # tide-of-battle (seed 001)
    ("tide-of-battle", {"sides": ["A"]}, [], "sides", "2..26 sides"),
    ("tide-of-battle", {"home": "z"}, [], "home", "unknown side 'z'"),
    ("tide-of-battle", {"morale": [3]}, [], "morale", "one whole number per side"),
    ("tide-of-battle", {"numbers": [3, {"heroes": 1}]}, [], "numbers", "unknown numbers"),
    ("tide-of-battle", {"numbers": [3, {"plain": -1}]}, [], "numbers", "whole number >= 0"),
    ("tide-of-battle", {}, [(ctx("attack"), None)], "side", "name the side"),
    ("tide-of-battle", {}, [(ctx("attack", side="a", target="z"), tray("d20:9"))], "target", "'z'"),
    (
        "tide-of-battle",
        {"sides": ["A", "B", "C"]},
        [(ctx("attack", side="a"), tray("d20:12"))],
        "target",
        "an attack without a target side needs exactly two sides",
    ),
    ("tide-of-battle", {}, [(ctx("shift", side="a"), tray("d6:1"))], "dice", "takes no dice"),
    (
        "tide-of-battle",
        {},
        [(ctx("demoralise", side="a", creature="Orc"), NO_DICE)] * 2,
        "creature",
        "Orc is already demoralised",
    ),
    # d6-pool (seed 002)
    ("d6-pool", {"stress_max": 0}, [], "stress_max", "at least 1"),
    ("d6-pool", {}, [(ctx(rating=13), None)], "rating", "rating must be at most 12"),
    ("d6-pool", {}, [(ctx(rating=2, threshold=5), None)], "threshold", "unknown threshold"),
    ("d6-pool", {}, [(ctx(rating=2, push="die"), None)], "actor", "needs the actor's name"),
    (
        "d6-pool",
        {},
        [(ctx(actor="Kira", rating=2, action="sneak", spend_momentum=True), None)],
        "spend_momentum",
        "momentum is spent on a strike",
    ),
    ("d6-pool", {}, [(ctx(rating=2), tray("d6:4"))], "dice", "the tray shows 1"),
    ("d6-pool", {}, [(ctx(rating=1), tray("d8:4"))], "dice", "throw d6 only"),
    ("d6-pool", {}, [(ctx("new-clock", clock="Gate", size=1), NO_DICE)], "size", "2..16"),
    (
        "d6-pool",
        {},
        [(ctx("new-clock", clock="Gate", rival="Guards"), NO_DICE)],
        "rival",
        "no clock called 'Guards'",
    ),
    (
        "d6-pool",
        {"zero_resistance": "cannot"},
        [(ctx("resist", attribute=0), tray("d6:4", "d6:2"))],
        "attribute",
        "does not allow resisting",
    ),
    ("d6-pool", {}, [(ctx("reveal"), NO_DICE)], None, "every participant must bid"),
    # battle-rhythm (seed 003)
    ("battle-rhythm", {"mobility": {"Ash": "fast"}}, [], "mobility", "whole numbers"),
    ("battle-rhythm", {}, [(ctx("charge"), None)], "mode", "unknown mode 'charge'"),
    ("battle-rhythm", {}, [(ctx("declare", effort=2), NO_DICE)], "actor", "actor's name"),
    ("battle-rhythm", {}, [(ctx("declare", "Ash", effort=0), NO_DICE)], "effort", ">= 1"),
    (
        "battle-rhythm",
        {},
        [(ctx("attack", casters="everyone"), tray("d6:1", "d6:2"))],
        "casters",
        "unknown casters",
    ),
    ("battle-rhythm", {}, [(ctx("attack"), tray("d6:1", "d6:2", "d6:3"))], "dice", "shows 3"),
    ("battle-rhythm", {}, [(ctx("advance"), NO_DICE)], None, "no action is scheduled"),
    # graded-d100 (seed 004)
    ("graded-d100", {"momentum_cap": 0}, [], "momentum_cap", "at least 1"),
    ("graded-d100", {}, [(ctx("attack"), None)], "side", "name the roller's side"),
    ("graded-d100", {}, [(ctx(side="a", defender=3), tray("d100:40"))], "defender", "non-empty"),
    ("graded-d100", {}, [(ctx(side="a", rank="Z"), tray("d100:40"))], "rank", "unknown rank"),
    (
        "graded-d100",
        {},
        [(ctx(side="a", target_rank="Z"), tray("d100:40"))],
        "target_rank",
        "unknown rank 'Z'",
    ),
    ("graded-d100", {}, [(ctx(side="a", base="boss"), tray("d100:9"))], "base", "unknown base"),
    ("graded-d100", {}, [(ctx(side="a", chance=150), tray("d100:9"))], "chance", "0..100"),
    ("graded-d100", {}, [(ctx(side="a"), tray("d20:9"))], "dice", "one d100"),
    (
        "graded-d100",
        {},
        [(ctx("defence", side="b", defender="Ogre"), tray("d100:50"))] * 2,
        "defender",
        "Ogre has already rolled a defence",
    ),
    (
        "graded-d100",
        {},
        [(ctx("defence", "Ogre", side="b"), tray("d100:50"))] * 2,
        "actor",
        "Ogre has already rolled a defence",
    ),
]


def _play(system: str, settings: Mapping[str, JSONValue], steps: Sequence[Step]) -> None:
    state = new_session("t", system, settings)
    for context, roll in steps:
        state = declare(state, context)
        if roll is not None:
            state, _ = record_roll(state, roll)


@pytest.mark.parametrize(
    ("system", "settings", "steps", "field", "words"),
    CASES,
    ids=[f"{c[0]}-{c[3]}-{i}" for i, c in enumerate(CASES)],
)
def test_a_refusal_names_the_field_at_fault(
    system: str,
    settings: Mapping[str, JSONValue],
    steps: Sequence[Step],
    field: str | None,
    words: str,
) -> None:
    with pytest.raises(RuleError, match=words) as refused:
        _play(system, settings, steps)
    assert refused.value.field == field


def test_undoing_nothing_refuses_the_whole_request() -> None:
    with pytest.raises(RuleError, match="nothing to undo") as refused:
        undo(new_session("t"))
    assert refused.value.field is None


# The raise sites that name no field, each a refusal of the whole request or a guard no
# user input reaches: (file under engine/, how its message starts, why it names none).
WHOLE_REQUEST = [
    (
        "session.py",
        "nothing to undo: no roll",
        "undo takes no input: there is nothing to take back",
    ),
    ("session.py", "nothing to undo: the rolls before", "undo takes no input: out of its reach"),
    ("session.py", "nothing to redo", "redo takes no input: nothing was just undone"),
    ("session.py", "<refused>", "undo across a system switch or a new Tide: state, not input"),
    ("systems/__init__.py", "unknown rule system", "the name is the request (system's main)"),
    ("systems/__init__.py", "rule system plugin", "a broken install, no input at fault"),
    ("codec.py", "cannot read", "stored data (the store, undo), never the GM's input"),
    ("systems/battle_rhythm/rhythm.py", "no action is scheduled", "advance on an empty clock"),
    ("systems/battle_rhythm/rhythm.py", "nothing has resolved yet", "rewind before a resolution"),
    ("systems/d6_pool/pool.py", "every participant must bid", "reveal takes no input: state"),
    ("systems/d6_pool/tracker.py", "bidding has begun", "the auction's state, not the roll"),
    ("systems/d6_pool/tracker.py", "an auction needs three", "bid before three have rolled"),
    ("systems/tide/track.py", "position {} is off", "guard: position comes from stored state"),
    ("systems/tide/track.py", "winner must be", "guard: the engine computes the winner"),
    ("systems/tide/track.py", "margin must be", "guard: the engine computes the margin"),
    ("systems/tide_of_battle/tide.py", "steps {} do not fit", "guard: stored state's invariant"),
    ("systems/tide_of_battle/tide.py", "no side at index", "guard: indexes come from side_index"),
]

ENGINE = Path(__file__).resolve().parents[1] / "engine"


def _template(node: ast.expr) -> str:
    """A message as its source spells it, each interpolation as {}."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            _template(part) if isinstance(part, ast.Constant) else "{}" for part in node.values
        )
    return f"<{ast.unparse(node)}>"


def _rule_errors() -> list[tuple[str, int, str, ast.keyword | None]]:
    """Every RuleError(...) in the engine: file, line, message, and its field= keyword."""
    found = []
    for path in sorted(ENGINE.rglob("*.py")):
        for node in ast.walk(parse_source(path)):
            if isinstance(node, ast.Call) and (
                getattr(node.func, "id", None) == "RuleError"
                or getattr(node.func, "attr", None) == "RuleError"
            ):
                message = _template(node.args[0]) if node.args else ""
                field = next((k for k in node.keywords if k.arg == "field"), None)
                found.append((path.relative_to(ENGINE).as_posix(), node.lineno, message, field))
    return found


def test_every_engine_refusal_names_a_field_or_is_a_whole_request_refusal() -> None:
    sites = _rule_errors()
    assert len(sites) > 100  # the scan sees the engine's refusals
    unnamed = [(f, line, m) for f, line, m, field in sites if field is None]
    allowed = {(f, start) for f, start, _ in WHOLE_REQUEST}
    stray = [
        f"engine/{f}:{line}: {m}"
        for f, line, m in unnamed
        if not any(f == af and m.startswith(start) for af, start in allowed)
    ]
    assert stray == [], "give these RuleErrors a field=, or allow-list them with a reason"
    for f, start, _ in WHOLE_REQUEST:  # no stale entry, none covering two sites
        assert sum(1 for u in unnamed if u[0] == f and u[2].startswith(start)) == 1, (f, start)


def test_no_refusal_spells_out_field_none() -> None:
    spelled = [
        f"engine/{f}:{line}"
        for f, line, _, field in _rule_errors()
        if field is not None and isinstance(field.value, ast.Constant) and field.value.value is None
    ]
    assert spelled == [], "omit field= for a whole-request refusal"
