"""The practice table played out: per kind, dice read right, read wrong and typed by the GM.

`run --sim` with its simulated GM, as a table plays it: each roll's dice are held against
what the simulated tray really shows (nearest die), so a wrong value the tower said in
silence is counted, not just the dice the GM typed; throws the rules refused are counted
too (each is one question to the GM, never a dropped throw).

    python bench/sim_table.py [--rolls 100] [--seed 7] [--geometry tower|renderer]

`--geometry renderer` throws the practice dice at the renderer's default size and lean
(6-15 mm dice, a wide lens) instead of the tower's (12-20 mm, its lean): the sim before
issue 36 was seen so. Use a fresh `TIDETOWER_SIM_DICE` folder per geometry: the dice are
taught at the size they are thrown.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import tempfile
from pathlib import Path

import tidetower.firmware.sim_dice as sim_dice
from tidetower.engine.tray import Box, Reading, TowerState
from tidetower.firmware.sim import SimulatedTable, sim_config, simulated_parts
from tidetower.firmware.tower import Tower
from tidetower.vision.synth import SynthDie, TraySpec

Tally = collections.Counter[tuple[str, str]]


def _gap(a: Box, b: Box) -> float:
    return (a[0] + a[2] - b[0] - b[2]) ** 2 + (a[1] + a[3] - b[1] - b[3]) ** 2


def score(reading: Reading, tray: tuple[SynthDie, ...], tally: Tally) -> None:
    """Count each die of a stored roll: right, wrong (said in silence) or typed, by kind."""
    for die in reading.dice:
        truth = min(tray, key=lambda d: _gap(d.box, die.box)) if tray else None
        if die.typed or truth is None:
            tally[(die.die, "typed")] += 1
        elif (truth.die, truth.value) == (die.die, die.value):
            tally[(die.die, "right")] += 1
        else:
            tally[(truth.die, "wrong")] += 1


def play(rolls: int, seed: int, work_size: int | None = None) -> tuple[Tally, int]:
    """Play `rolls` rolls of the practice table (its reader at `work_size`, if given); the
    tally and how many throws were refused."""
    config = sim_config(Path(tempfile.mkdtemp(prefix="tidetower-bench-")) / "session.db")
    if work_size is not None:
        reader = config.camera.reader
        config.camera.reader = dataclasses.replace(reader, work_size=work_size)
    tally: Tally = collections.Counter()
    refused: list[object] = []
    with Tower(config, simulated_parts(config, seed)) as tower:
        sim = tower.extras
        assert isinstance(sim, SimulatedTable)
        tower.loop.on_roll.append(lambda _r, reading: score(reading, sim.source.dice, tally))
        while len(tower.table.state.history) < rolls:
            tower.step()
            attention = tower.loop.attention
            waiting = tower.loop.state is TowerState.NEEDS_ATTENTION and attention is not None
            if waiting and attention.kind == "refused" and attention not in refused:
                refused.append(attention)
    return tally, len(refused)


def main() -> None:
    """Print right / wrong / typed per kind, and the throws the rules refused."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--geometry", choices=("tower", "renderer"), default="tower")
    parser.add_argument("--work-size", type=int, help="the reader's working size (640)")
    args = parser.parse_args()
    if args.geometry == "renderer":
        sim_dice.TOWER_SIDE, sim_dice.TOWER_LEAN = TraySpec.side, TraySpec.lean
    tally, refused = play(args.rolls, args.seed, args.work_size)
    kinds = sorted({kind for kind, _ in tally})
    read_at = f", read at {args.work_size} px" if args.work_size else ""
    print(f"{args.rolls} rolls, seed {args.seed}, {args.geometry} geometry{read_at}")
    print("kind      dice  right  wrong  typed  (per 100 dice)")
    for kind in [*kinds, "all"]:
        count = {
            said: sum(n for (k, s), n in tally.items() if s == said and kind in (k, "all"))
            for said in ("right", "wrong", "typed")
        }
        dice = sum(count.values())
        per = {said: 100 * n / max(dice, 1) for said, n in count.items()}
        print(
            f"{kind:8} {dice:5}  {per['right']:5.1f}  {per['wrong']:5.1f}  {per['typed']:5.1f}"
            f"   ({count['wrong']} wrong, {count['typed']} typed)"
        )
    print(f"throws the rules refused (one question each): {refused}")


if __name__ == "__main__":
    main()
