"""How long `tidetower stats dice` takes over a year of weekly sessions (about 50,000 dice).

Builds a store in a temporary folder with the engine's own session and store (52 weekly
sessions of rolls, four d8 and a d20 read by the camera each, a d20 typed now and then),
then times the command's computation (reading the store read-only, counting every die, the
chi-squared figures) and the whole command in-process, median of `--repeat` runs.

    .venv/bin/python bench/stats.py [--dice 50000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from tidetower.engine import session as pure
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.session import SessionState
from tidetower.engine.stats import summaries
from tidetower.engine.store import SessionStore
from tidetower.engine.tray import DieRead, Reading, roll_of
from tidetower.firmware.cli import main
from tidetower.firmware.stats_cli import stored_dice

WEEKS = 52
PER_ROLL = 5
START = datetime(2026, 1, 5, 19, tzinfo=UTC).timestamp()
WEEK = 7 * 86_400.0
POOL = RollContext(
    actor="Zhao", side="a", mode="unopposed", pool=4, params={"tide_linked": True, "tier": "d8"}
)


def reading(rng: random.Random) -> tuple[DieRead, ...]:
    """Four d8 and a d20 as the camera reads them; one d20 in ten typed by the GM."""
    d8s = [
        DieRead("d8", rng.randint(1, 8), (0.1 * i, 0.1, 0.1 * i + 0.08, 0.2), 0.95)
        for i in range(4)
    ]
    typed = rng.random() < 0.1
    d20 = DieRead("d20", rng.randint(1, 20), (0.6, 0.5, 0.7, 0.6), 0.9, typed=typed)
    return (*d8s, d20)


def throw(state: SessionState, rng: random.Random, at: float) -> SessionState:
    """One roll recorded; a routed or refusing Tide is set up afresh and the roll thrown again."""
    read = reading(rng)
    try:
        return pure.record_roll(state, roll_of(Reading(read)), POOL, at=at, reading=read)[0]
    except RuleError:
        state = pure.reset_tracker(state, {}, at)
        return pure.record_roll(state, roll_of(Reading(read)), POOL, at=at, reading=read)[0]


def build(path: Path, dice: int) -> None:
    """A store of `dice` dice over WEEKS weekly sessions, saved once a session."""
    rng = random.Random(29)
    per_week = dice // PER_ROLL // WEEKS
    state = pure.new_session("bench", "tide", None)
    with SessionStore(path) as store:
        for week in range(WEEKS):
            state = pure.reset_tracker(state, {}, START + week * WEEK)
            for i in range(per_week):
                state = throw(state, rng, START + week * WEEK + 60.0 * i)
            store.save(state)


def median_ms(work: object, repeat: int) -> tuple[float, float]:
    """The first (cold) and the median wall time of `repeat` calls, in ms."""
    assert callable(work)
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        work()
        times.append((time.perf_counter() - began) * 1000)
    return times[0], statistics.median(times)


def _invoked(command: list[str]) -> None:
    """Run the command in-process; it must succeed."""
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 0, result.output


def main_bench() -> None:
    """Build the store, time the computation and the command, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dice", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "year.db"
        began = time.perf_counter()
        build(path, args.dice)
        counted = sum(stored_dice(path).values())
        print(f"store: {counted} dice, built in {time.perf_counter() - began:.1f} s")
        cold, median = median_ms(lambda: summaries(stored_dice(path)), args.repeat)
        print(
            f"read + count + chi-squared: first {cold:.0f} ms,"
            f" median of {args.repeat} {median:.0f} ms"
        )
        command = ["stats", "dice", "--store", str(path)]
        cold, median = median_ms(lambda: _invoked(command), args.repeat)
        print(f"`tidetower stats dice` in-process: first {cold:.0f} ms, median {median:.0f} ms")


if __name__ == "__main__":
    main_bench()
