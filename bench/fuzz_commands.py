"""Benchmark: issue 17's fuzz suite, longer and deeper than CI's (tests/test_fuzz_commands.py).

In process: `--examples` tables, each sent up to `--commands` fuzzed commands through the
CommandDesk, every reply and every accepted command checked as CI checks them (reply names
the id, a refusal changes nothing, the accepted state stores, publishes, draws and reloads;
the store's integrity at the end). Live: `--batches` batches of up to `--batch` messages at
once to `tidetower run --sim` on a Mosquitto started here, rolling all along; then a clean
stop, a restart that runs no retained command, and the retained `tide` reloaded.

Prints the examples run, the commands sent, commands/s (median over examples: the desk's
own time, checks left out; live: a batch's messages over the time to its last reply),
replies matched, crashes, what was accepted and the refusals by kind.
Run: python bench/fuzz_commands.py [--examples 1500] [--commands 60] [--batches 300]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fuzz_checks import apply_checked, check_store  # the suite's own, beside its tests
from fuzz_live import Reply, check_restart, fuzz_live, live_tower
from fuzz_strategies import Sent, messages
from mqtt_fixtures import Mosquitto, broker_settings

from tidetower.engine.systems import system_names
from tidetower.engine.table import Table
from tidetower.mqtt.commands import CommandDesk
from tidetower.mqtt.payloads import CommandResult
from tidetower.mqtt.settings import MqttSettings

KINDS = (  # a refusal's kind, by the words of its message (first match)
    ("retained", "retained commands are not run"),
    ("too big", "bytes; the limit"),
    ("too deep", "nests"),
    ("not JSON", "not JSON"),
    ("not an object", "must be a JSON object"),
    ("not text", "surrogate"),
    ("not text", "control character"),
    ("unknown command", "unknown command"),
    ("number bounds", "must be between -1000000"),
    ("number bounds", "finite number"),
    ("no read loop", "needs the camera's read loop"),
)
SCHEMA_WORDS = ("Input should", "Field required", "Extra inputs", "Value error", "String should")


def refusal_kind(message: str) -> str:
    """What kind of refusal a message says: the bounds, the schema, or the rules."""
    for kind, words in KINDS:
        if words in message:
            return kind
    return "schema" if any(w in message for w in SCHEMA_WORDS) else "rules / read loop"


class Figures:
    """What the run counted."""

    def __init__(self) -> None:
        self.examples = self.sent = self.named = 0
        self.rates: list[float] = []
        self.accepted: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()
        self.sources: Counter[str] = Counter()

    def reply(self, reply: Reply) -> None:
        """Count one reply: accepted (by command) or refused (by kind)."""
        self.sent += 1
        self.named += reply["id"] is not None
        if reply["ok"]:
            self.accepted[reply["command"]] += 1
        else:
            self.refused[refusal_kind(reply["error"]["message"])] += 1

    def report(self, title: str, rate: str) -> None:
        print(f"## {title}")
        print(f"examples run: {self.examples}; messages sent: {self.sent} {dict(self.sources)}")
        median = statistics.median(self.rates) if self.rates else 0.0
        print(f"{rate}: median {median:.0f}/s (min {min(self.rates, default=0):.0f})")
        print(f"replies matched: {self.sent} of {self.sent} ({self.named} naming an id)")
        print("crashes: 0; tower alive: yes")
        print(f"accepted ({sum(self.accepted.values())}): {dict(self.accepted.most_common())}")
        print(f"refused ({sum(self.refused.values())}): {dict(self.refused.most_common())}")


class TimedDesk(CommandDesk):
    """The desk, timing its own work (parsing, checking, applying) apart from the checks."""

    spent = 0.0

    def handle(self, name: str, raw: bytes) -> CommandResult:
        started = time.perf_counter()
        try:
            return super().handle(name, raw)
        finally:
            self.spent += time.perf_counter() - started

    def answer(self, name: str, raw: bytes, retained: bool = False) -> CommandResult:
        if not retained:
            return super().answer(name, raw)  # timed in handle()
        started = time.perf_counter()
        try:
            return super().answer(name, raw, retained)
        finally:
            self.spent += time.perf_counter() - started


def in_process(figures: Figures, examples: int, commands: int, base: int) -> None:
    """The in-process layer, as CI runs it but longer."""

    @seed(base)
    @settings(
        max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "s.db"
            with Table(path, data.draw(st.sampled_from(system_names()))) as table:
                desk = TimedDesk(table)
                count = data.draw(st.integers(1, commands))
                for _ in range(count):
                    sent = data.draw(messages(table.state))
                    figures.sources[sent.kind] += 1
                    figures.reply(apply_checked(desk, sent).model_dump(mode="json"))
                figures.rates.append(count / desk.spent)
                state = table.state
            check_store(path, state)
        figures.examples += 1

    run()


def live(figures: Figures, batches: int, batch: int) -> tuple[int, int]:
    """The live layer against a Mosquitto started here; returns the rolls made meanwhile
    and the retained commands a restart refused."""
    with tempfile.TemporaryDirectory() as folder:
        mosquitto = Mosquitto(Path(folder)).start()
        try:
            broker = broker_settings(mosquitto.port, mosquitto.ws_port)
            return _live_run(mosquitto, broker, Path(folder), figures, batches, batch)
        finally:
            mosquitto.stop()


def _live_run(
    mosquitto: Mosquitto,
    broker: MqttSettings,
    folder: Path,
    figures: Figures,
    batches: int,
    batch: int,
) -> tuple[int, int]:
    with live_tower(mosquitto, broker, folder / "s.db") as live:
        first = len(live.tower.state().history)

        def seen(sent: list[Sent], replies: list[Reply], seconds: float) -> None:
            figures.examples += 1
            figures.rates.append(len(sent) / seconds)
            figures.sources.update(s.kind for s in sent)
            for reply in replies:
                figures.reply(reply)

        fuzz_live(live, batches, batch, seen)
        rolls = len(live.tower.state().history) - first
        return rolls, check_restart(live)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1500)
    parser.add_argument("--commands", type=int, default=60)
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    started = time.monotonic()
    inside = Figures()
    in_process(inside, args.examples, args.commands, args.seed)
    inside.report("in process (CommandDesk, every check)", "commands/s, the desk's own time")
    outside = Figures()
    rolls, retained = live(outside, args.batches, args.batch)
    outside.report("live (tidetower run --sim, Mosquitto)", "messages/s, a batch to its replies")
    print(f"rolls recorded meanwhile: {rolls}; stopped cleanly (exit 0)")
    print(f"restarted: {retained} retained commands refused and cleared, none run; tide reloaded")
    print(f"total {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
