"""Time from the settled frame to the outcome in the session, over simulated rolls, and how
many dice the simulated GM had to type.

    python bench/readloop_latency.py [--rolls 200] [--seed 1]

The clock starts when the read loop hands the settled frame to the reader and stops when
the roll's outcome is stored in the session (SQLite, synchronous=FULL) and announced. Rolls
the GM finished by hand are counted, not timed.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from tidetower.engine.tray import Reading
from tidetower.firmware.sim import SimulatedTable, sim_config, simulated_parts
from tidetower.firmware.tower import Tower

READS: list[float] = []
"""Milliseconds the reader took on each frame it was handed, GM's rolls and re-reads too."""


def measure(rolls: int, seed: int) -> tuple[list[float], int, int]:
    """Milliseconds from settled frame to stored outcome, one per roll the camera read alone;
    the dice thrown in all rolls, and how many of them the GM typed."""
    folder = Path(tempfile.mkdtemp(prefix="tidetower-bench-"))
    latencies: list[float] = []
    config = sim_config(folder / "session.db")
    with Tower(config, simulated_parts(config, seed)) as tower:
        sim = tower.extras
        assert isinstance(sim, SimulatedTable)
        reader = tower.loop.reader
        started: list[float] = []

        def timed_reader(frame: np.ndarray):  # type: ignore[no-untyped-def]
            started.append(time.perf_counter())
            reading = reader(frame)
            READS.append((time.perf_counter() - started[-1]) * 1e3)
            return reading

        tower.loop.reader = timed_reader
        fixes, seen = [0], [0, 0]

        def done(_record: object, reading: Reading) -> None:
            if sim.gm_fixes == fixes[0]:  # rolls the GM finished by hand are not timed
                latencies.append((time.perf_counter() - started[-1]) * 1e3)
            fixes[0] = sim.gm_fixes
            seen[0] += 1
            seen[1] += len(reading.dice) + len(reading.unreadable)

        tower.loop.on_roll.append(done)
        while seen[0] < rolls:
            tower.step()
    return latencies, seen[1], sim.gm_fixes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    timed, dice, typed = measure(args.rolls, args.seed)
    latencies = sorted(timed)
    print(f"settled frame -> outcome in session, {len(latencies)} simulated rolls, one thread")
    if latencies:
        p99 = latencies[min(len(latencies) - 1, round(0.99 * len(latencies)) - 1)]
        print(
            f"  median {statistics.median(latencies):.1f} ms   p99 {p99:.1f} ms   "
            f"max {latencies[-1]:.1f} ms"
        )
    else:
        print("  none: the GM finished every roll by hand")
    reads = sorted(READS)
    p99 = reads[min(len(reads) - 1, round(0.99 * len(reads)) - 1)]
    print(
        f"the reader on each settled frame ({len(reads)}): median "
        f"{statistics.median(reads):.1f} ms   p99 {p99:.1f} ms"
    )
    print(
        f"the simulated GM typed {typed} of {dice} dice in {args.rolls} rolls "
        f"({100 * typed / max(dice, 1):.1f} per 100)"
    )


if __name__ == "__main__":
    main()
