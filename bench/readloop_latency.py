"""Time from the settled frame to the outcome in the session, over simulated rolls.

    python bench/readloop_latency.py [--rolls 200] [--seed 1]

The clock starts when the read loop hands the settled frame to the reader and stops when
the roll's outcome is stored in the session (SQLite, synchronous=FULL) and announced.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from tidetower.firmware.sim import SimulatedTable, sim_config, simulated_parts
from tidetower.firmware.tower import Tower


def measure(rolls: int, seed: int) -> list[float]:
    """Milliseconds from settled frame to stored outcome, one per roll."""
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
            return reader(frame)

        tower.loop.reader = timed_reader
        fixes = [0]

        def done(_record: object, _reading: object) -> None:
            if sim.gm_fixes == fixes[0]:  # rolls the GM finished by hand are not timed
                latencies.append((time.perf_counter() - started[-1]) * 1e3)
            fixes[0] = sim.gm_fixes

        tower.loop.on_roll.append(done)
        while len(latencies) < rolls:
            tower.step()
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rolls", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    cv2.setNumThreads(1)
    latencies = sorted(measure(args.rolls, args.seed))
    p99 = latencies[min(len(latencies) - 1, round(0.99 * len(latencies)) - 1)]
    print(f"settled frame -> outcome in session, {len(latencies)} simulated rolls, one thread")
    print(
        f"  median {statistics.median(latencies):.1f} ms   p99 {p99:.1f} ms   "
        f"max {latencies[-1]:.1f} ms"
    )


if __name__ == "__main__":
    main()
