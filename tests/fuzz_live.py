"""The fuzz suite's live layer: `tidetower run --sim` on a real Mosquitto, rolling all
along, sent batches of fuzzed messages at once; every message gets a reply naming its id
when it has one, the tower stays alive, and after it stops its store is whole, a restart
runs no retained command and the retained `tide` reloads (tests/test_fuzz_commands.py and
bench/fuzz_commands.py)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzz_checks import RETAINED, Unsure, check_store, check_tide_reloads, expected_id
from fuzz_strategies import Sent, messages
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from mqtt_fixtures import WAIT, Listener, Mosquitto

from tidetower.engine.session import SessionState
from tidetower.engine.store import SessionStore
from tidetower.mqtt.payloads import BarPayload, CommandResult
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics

RUN = [sys.executable, "-m", "tidetower.firmware.cli"]
STOPPING = 120.0
"""How long a stop may take: a tower stopped while it learns lets the learning end first."""
Reply = dict[str, Any]
Wanted = Counter[tuple[str, str | Unsure | None]]


@dataclass
class RunningTower:
    """`tidetower run --sim` on a Mosquitto, its output in files beside its store."""

    broker: Mosquitto
    table: str
    store: Path
    process: subprocess.Popen[bytes] | None = None

    def start(self, *args: str) -> RunningTower:
        out, err = (self.store.with_suffix(s).open("ab") for s in (".out", ".err"))
        command = [*RUN, "run", "--sim", "--fast", "--seed", "3", "--store", str(self.store)]
        where = ["--broker", f"127.0.0.1:{self.broker.port}", "--table", self.table]
        self.process = subprocess.Popen([*command, *where, *args], stdout=out, stderr=err)
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def errors(self) -> str:
        return self.store.with_suffix(".err").read_text(errors="replace")

    def stop(self) -> int:
        """SIGTERM, as systemd stops it; its exit code."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.terminate()
        return self.process.wait(STOPPING)

    def __enter__(self) -> RunningTower:
        return self

    def __exit__(self, *exc: object) -> None:
        """A tower a failed check left running is killed (its own process, by its id)."""
        if self.alive():
            assert self.process is not None
            self.process.kill()
            self.process.wait(WAIT)

    def state(self) -> SessionState:
        """The session as `session show` reads it while the tower runs."""
        with SessionStore(self.store, wait_s=WAIT, read_only=True) as store:
            state = store.load()
        assert state is not None
        return state


@dataclass
class LiveFuzz:
    """A running tower, the GM's client on its broker, and what was sent retained."""

    tower: RunningTower
    listener: Listener
    settings: MqttSettings
    retained: dict[str, Sent] = field(default_factory=dict)

    @property
    def topics(self) -> Topics:
        return Topics.of(self.settings)

    def send(self, batch: list[Sent]) -> list[Reply]:
        """Publish `batch` at once and return the replies: one a message, each naming the
        command and the request's id when it has one."""
        for sent in batch:
            topic = self.topics.command(sent.name)
            assert self.listener.client.publish(topic, sent.raw, 1, sent.retain)
        self.retained.update({s.name: s for s in batch if s.retain})
        return self.replies(Counter((s.name, expected_id(s.raw)) for s in batch))

    def replies(self, wanted: Wanted) -> list[Reply]:
        """The replies `wanted` (command, id), as they arrive; one to anything else fails."""
        replies: list[Reply] = []
        deadline = time.monotonic() + WAIT
        while wanted.total():
            try:
                left = max(0.0, deadline - time.monotonic())
                message = self.listener.messages.get(timeout=left)
            except queue.Empty:
                alive = "alive" if self.tower.alive() else "dead"
                raise AssertionError(
                    f"no reply to {+wanted}; the tower is {alive}: {self.tower.errors()}"
                ) from None
            if message.topic == self.topics.command_result:
                replies.append(take(wanted, json.loads(message.payload)))
        return replies


@contextmanager
def live_tower(mosquitto: Mosquitto, broker: MqttSettings, store: Path) -> Iterator[LiveFuzz]:
    """`tidetower run --sim` on `mosquitto` for `broker`'s table, online, with the GM's
    client listening for replies."""
    topics = Topics.of(broker)
    with (
        Listener(broker, topics.command_result, topics.status) as listener,
        RunningTower(mosquitto, broker.table, store) as tower,
    ):
        tower.start()
        listener.wait_for(lambda m: m.topic == topics.status and m.payload == b"online")
        yield LiveFuzz(tower, listener, broker)


def take(wanted: Wanted, reply: Reply) -> Reply:
    """Count `reply` off the replies wanted: to its id, or to a body that was no JSON;
    it is valid on the wire, and a refusal is one line in the tower's own words."""
    CommandResult.model_validate(reply)
    if not reply["ok"]:
        message = reply["error"]["message"]
        assert "\n" not in message and "the tower failed" not in message, reply
    for key in ((reply["command"], reply["id"]), (reply["command"], Unsure.ID)):
        if wanted[key] > 0:
            wanted[key] -= 1
            return reply
    raise AssertionError(f"a reply to nothing sent: {reply}; waiting for {+wanted}")


Batch = Callable[[list[Sent], list[Reply], float], None]


def fuzz_live(live: LiveFuzz, examples: int, batch_size: int, seen: Batch | None = None) -> None:
    """Send `examples` batches of up to `batch_size` fuzzed messages, each at once, to the
    running tower; `seen` hears of each batch, its replies and how long they took."""
    first = live.tower.state()
    # drawn for the table as it started: what a draw is made of must not change between
    # Hypothesis's examples, while the table it is sent to rolls on
    batches = st.lists(messages(first), min_size=1, max_size=batch_size)

    @settings(max_examples=examples, deadline=None, phases=[Phase.explicit, Phase.generate])
    @given(sent=batches)
    def batch(sent: list[Sent]) -> None:
        sent = [s for s in sent if s.raw]  # an empty message only clears a retained one
        started = time.perf_counter()
        replies = live.send(sent)
        if seen is not None:
            seen(sent, replies, time.perf_counter() - started)
        assert live.tower.alive(), live.tower.errors()

    batch()
    assert live.tower.alive(), live.tower.errors()
    assert _rolled_on(live, len(first.history))  # it rolled all along, and rolls still


def _rolled_on(live: LiveFuzz, before: int, wait: float = 120.0) -> bool:
    """True once the tower's history is longer than `before`: a busy machine rolls slower,
    so this waits for the roll, not for a time."""
    until = time.monotonic() + wait
    while time.monotonic() < until:
        if len(live.tower.state().history) > before:
            return True
        time.sleep(0.5)
    return False


def check_stopped(tower: RunningTower) -> None:
    """A SIGTERM stops the tower cleanly: exit 0, no thread died of an exception (a
    traceback a warning logs, as a refused learning's, is no failure)."""
    assert tower.stop() == 0 and "Exception in thread" not in tower.errors(), tower.errors()


def check_restart(live: LiveFuzz) -> int:
    """After the fuzz the store is whole; a restart runs no retained command (it refuses
    and clears each, replying with its id) and the retained `tide` is the store's bar.
    Returns how many retained commands the restart refused."""
    tower, topics = live.tower, live.topics
    check_stopped(tower)
    check_store(tower.store, tower.state())
    tower.start()
    wanted = Counter((s.name, expected_id(s.raw)) for s in live.retained.values())
    refused = live.replies(wanted)
    for reply in refused:
        assert not reply["ok"] and RETAINED in reply["error"]["message"], reply
    check_stopped(tower)
    with Listener(live.settings, topics.tide, topics.commands) as late:
        left = late.settled()
    tide = [m for m in left if m.topic == topics.tide]
    assert len(tide) == 1 and tide[0].retain
    bar = check_tide_reloads(tower.state().bar())
    assert BarPayload.model_validate_json(tide[0].payload) == bar
    assert [m.topic for m in left if m.topic != topics.tide and m.payload] == []
    return len(refused)
