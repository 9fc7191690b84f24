"""Benchmark: median time of the exact d6-pool odds for 1..12 dice (not a timed test).

Run: /work/venv/bin/python bench/odds.py [--repeat N]
Prints one row per pool size: median milliseconds of `pool_odds` at 3+ and at 4+,
then the median of the whole `tidetower odds pool --dice 4` command run in-process
(click parsing, counting and printing; interpreter start-up excluded).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial

from click.testing import CliRunner

from tidetower.engine.systems.d6_pool.odds import pool_odds
from tidetower.firmware.cli import main


def median_ms(work: Callable[[], object], repeat: int) -> float:
    """Median wall time of `work` in milliseconds over `repeat` runs."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def run(repeat: int) -> None:
    """Print the table of median times."""
    print(f"exact d6-pool odds, median of {repeat} runs (ms)")
    print(f"{'dice':>4}  {'3+':>8}  {'4+':>8}")
    for dice in range(1, 13):
        skill = median_ms(partial(pool_odds, dice, 1, 3), repeat)
        combat = median_ms(partial(pool_odds, dice, 1, 4), repeat)
        print(f"{dice:>4}  {skill:8.3f}  {combat:8.3f}")
    runner = CliRunner()
    command = median_ms(lambda: runner.invoke(main, ["odds", "pool", "--dice", "4"]), repeat)
    print(f"`tidetower odds pool --dice 4` in-process: {command:.3f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50, help="runs per measurement")
    run(parser.parse_args().repeat)
