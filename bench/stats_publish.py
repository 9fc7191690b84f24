"""The retained `stats` the tower publishes after each roll: worked out afresh from the whole
session against kept up to date (`SessionStats`, each roll counted once), after the last roll
of a session of `--rolls` Tide throws."""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import time

from tidetower.engine import session as pure
from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.session import SessionState
from tidetower.mqtt.stats import SessionStats, stats_payload


def session(rolls: int) -> SessionState:
    """A Tide session of `rolls` Tide-linked throws of 3d8 and the d20, sides in turn."""
    rng = random.Random(1)
    state = pure.new_session("bench", "tide", {"weight_a": 100, "weight_b": 100})
    for n in range(rolls):
        side = "ab"[n % 2]
        linked = RollContext(actor=side, side=side, mode="unopposed", params={"tide_linked": True})
        state = pure.declare(state, linked)
        faces = [Die(DieKind.D8, rng.randint(1, 8)) for _ in range(3)]
        state, _ = pure.record_roll(state, Roll((*faces, Die(DieKind.D20, rng.randint(1, 20)))))
    return state


def main() -> None:
    """Time both ways `--repeat` times and print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    state = session(args.rolls)
    before = dataclasses.replace(state, history=state.history[:-1])
    afresh, kept = [], []
    for _ in range(args.repeat):
        began = time.perf_counter()
        stats_payload(state)
        afresh.append(time.perf_counter() - began)
        keeper = SessionStats()
        keeper.payload(before)
        began = time.perf_counter()
        keeper.payload(state)
        kept.append(time.perf_counter() - began)
    print(
        f"stats after roll {args.rolls}: afresh {1000 * statistics.median(afresh):.1f} ms,"
        f" kept {1000 * statistics.median(kept):.1f} ms (medians of {args.repeat})"
    )


if __name__ == "__main__":
    main()
