"""How long `tidetower stats luck` takes over a year of weekly sessions (about 50,000 dice).

Builds the store `bench/stats.py` builds (52 weekly sessions, four d8 and a d20 a throw,
some 10,000 throws), then times reading it read-only and working out every throw's odds
again (`luck(stored_records(path))`, with the garbage collector paused as the command pauses
it), and the whole command in-process, median of `--repeat`.

    .venv/bin/python bench/luck.py [--dice 50000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from stats import _invoked, build, median_ms

from tidetower.engine.luck import Luck, luck
from tidetower.firmware.luck_cli import gc_paused, stored_records


def computed(path: Path) -> Luck:
    """The store's luck as `stats luck` works it out: read, then judged, the collector off."""
    records = stored_records(path, None)
    with gc_paused():
        return luck(records)


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
        found = luck(stored_records(path, None))
        print(f"store: {len(found.throws)} throws, built in {time.perf_counter() - began:.1f} s")
        cold, median = median_ms(lambda: computed(path), args.repeat)
        print(f"read + odds + luck: first {cold:.0f} ms, median of {args.repeat} {median:.0f} ms")
        command = ["stats", "luck", "--store", str(path)]
        cold, median = median_ms(lambda: _invoked(command), args.repeat)
        print(f"`tidetower stats luck` in-process: first {cold:.0f} ms, median {median:.0f} ms")
        command = ["stats", "tracker", "--store", str(path), "--out", str(Path(folder) / "b.svg")]
        cold, median = median_ms(lambda: _invoked(command), args.repeat)
        print(f"`tidetower stats tracker` in-process: first {cold:.0f} ms, median {median:.0f} ms")


if __name__ == "__main__":
    main_bench()
