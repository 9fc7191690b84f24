"""One bad event never stops the tower: an outbox row that cannot be published is set aside
(kept in the store, reported on `tower` and in the log) while the rows behind it go out; a
roll the terminal cannot draw is reported and the next rolls are drawn and published; and
the retained `tower` never blinks empty on a normal start."""

from __future__ import annotations

import contextlib
import json
import random
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from mqtt_fixtures import WAIT, Listener, Mosquitto, free_port
from playwright.sync_api import Page, expect

from tidetower.engine.codec import dump
from tidetower.engine.dice import DieKind, Roll
from tidetower.engine.rules import (
    BarState,
    JSONValue,
    Outcome,
    PracticeTurn,
    RollContext,
    RollRecord,
    RuleSystem,
)
from tidetower.engine.store import OutboxEvent, SessionStore
from tidetower.engine.systems import register, unregister
from tidetower.engine.table import Table
from tidetower.firmware.cli import main
from tidetower.firmware.sim import sim_config, simulated_parts
from tidetower.firmware.tower import Tower
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.runtime import table_link
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics

RUN = [sys.executable, "-m", "tidetower.firmware.cli", "run", "--sim", "--fast", "--json"]
POISONED = 44  # more than the publisher fetches at once (2 x its window of 20)


def _run(store: Path, settings: MqttSettings, rolls: int) -> list[dict[str, object]]:
    """`tidetower run --sim` on `store` for `rolls` rolls; its JSON lines."""
    where = ["--broker", f"127.0.0.1:{settings.port}", "--table", settings.table]
    done = subprocess.run(
        [*RUN, "--rolls", str(rolls), "--store", str(store), *where],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _broker(mosquitto: Mosquitto) -> MqttSettings:
    settings = mosquitto.settings()
    return settings.with_broker(f"127.0.0.1:{mosquitto.port}", settings.table)


def _poisoned_store(path: Path) -> list[int]:
    """A table whose outbox holds rows no publisher can send: a bar labelled with a lone
    surrogate (as issue 17's `system` command stored one), saved through the store's API,
    and a row whose body is not JSON, written into SQLite; returns their seqs, in order."""
    with Table(path) as table:
        bar = {**dump(table.bar()), "label_a": "\ud800"}
        body: dict[str, JSONValue] = {"system": "tide", "bar": bar, "declared": {}}
        table.store.save(table.state, [OutboxEvent("state", body)] * POISONED)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("INSERT INTO outbox (kind, body) VALUES ('roll', '{not json')")
        return [seq for (seq,) in db.execute("SELECT seq FROM outbox ORDER BY seq")]


def test_a_poisoned_row_is_set_aside_and_the_rows_behind_it_go_out(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    store, settings = tmp_path / "s.db", _broker(mosquitto)
    poisoned = _poisoned_store(store)
    topics = Topics.of(settings)
    with Listener(settings, topics.roll, topics.tower) as listener:
        printed = _run(store, settings, rolls=3)
        results = [
            listener.json_on(
                topics.roll, lambda b, i=r["roll"]: b["id"] == i and b["phase"] == "result"
            )
            for r in printed
        ]
        reported = listener.json_on(
            topics.tower, lambda b: any(f"outbox event {poisoned[-1]} " in p for p in b["problems"])
        )
    assert [r["seq"] for r in results] == [1, 2, 3]  # in order, behind the poisoned rows
    assert "set aside in the store" in reported["problems"][-1]
    assert "not an event" in reported["problems"][-1]
    with SessionStore(store, read_only=True) as kept:
        aside = kept.parked()
        assert kept.pending() == []
    assert [p.event.seq for p in aside] == poisoned  # none lost, none sent
    assert "surrogates not allowed" in aside[0].reason  # and the row as it was:
    assert r'"label_a": "\ud800"' in json.dumps(aside[0].event.body)


def test_a_row_set_aside_stays_aside_over_a_restart_and_can_be_put_back(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    store, settings = tmp_path / "s.db", _broker(mosquitto)
    poisoned = _poisoned_store(store)
    topics = Topics.of(settings)
    _run(store, settings, rolls=1)
    with SessionStore(store, read_only=True) as kept:  # as many as it got to before it stopped
        aside = len(kept.parked())
    assert aside > 0
    start = f"{aside} outbox event(s) could not be published and are set aside in the store"
    with Listener(settings, topics.roll, topics.tower) as listener:
        (again,) = _run(store, settings, rolls=1)
        result = listener.json_on(topics.roll, lambda b: b["phase"] == "result")
        listener.json_on(topics.tower, lambda b: any(p.startswith(start) for p in b["problems"]))
    assert result["id"] == again["roll"] and result["seq"] == 2
    listed = CliRunner().invoke(main, ["session", "outbox", "--store", str(store)])
    assert listed.exit_code == 0, listed.output
    assert f"0 event(s) waiting to be sent; {len(poisoned)} set aside" in listed.output
    assert (
        f"seq {poisoned[-1]} (roll): ValueError: the stored body is not an event" in listed.output
    )
    retried = CliRunner().invoke(main, ["session", "outbox", "--retry", "--store", str(store)])
    assert retried.exit_code == 0, retried.output
    with SessionStore(store, read_only=True) as kept:  # back in their old places, in order
        assert [e.seq for e in kept.pending()] == poisoned and kept.parked() == []


@dataclass(frozen=True)
class Smudge:
    """The tracker: how many throws so far."""

    throws: int = 0


class SmudgedBar(RuleSystem[Smudge]):
    """A d6 a throw; after the second throw the bar names a colour no terminal can draw."""

    name = "smudged-bar"
    state_type = Smudge

    def initial_state(self, settings: Mapping[str, JSONValue]) -> Smudge:
        return Smudge()

    def resolve(
        self, state: Smudge, context: RollContext, roll: Roll, earlier: Mapping[str, RollRecord]
    ) -> tuple[Smudge, Outcome]:
        after = Smudge(state.throws + 1)
        return after, Outcome(f"throw {after.throws}", {"throws": after.throws})

    def bar(self, state: Smudge) -> BarState:
        colour = "smudge" if state.throws == 2 else "#dc143c"
        return BarState(self.name, 0, 9, state.throws % 10, colour_a=colour)

    def practice_turn(
        self,
        state: Smudge,
        history: Sequence[RollRecord],
        rng: random.Random,
        options: Mapping[str, JSONValue],
    ) -> PracticeTurn:
        return PracticeTurn(RollContext(actor="Ann"), (DieKind.D6,))


@pytest.fixture
def smudged() -> Iterator[str]:
    register(SmudgedBar)
    yield SmudgedBar.name
    unregister(SmudgedBar.name)


def test_a_roll_the_terminal_cannot_draw_is_reported_and_the_tower_carries_on(
    smudged: str, mosquitto: Mosquitto, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = _broker(mosquitto)
    topics = Topics.of(settings)
    args = ["run", "--sim", "--fast", "--rolls", "4", "--system", smudged]
    args += ["--store", str(tmp_path / "s.db"), "--broker", f"127.0.0.1:{settings.port}"]
    with Listener(settings, topics.roll, topics.tower) as listener:
        run = CliRunner().invoke(main, [*args, "--table", settings.table])
        assert run.exit_code == 0, run.output
        results = [
            listener.json_on(topics.roll, lambda b, n=n: b["seq"] == n and b["phase"] == "result")
            for n in (1, 2, 3, 4)
        ]
        reported = listener.json_on(topics.tower, lambda b: bool(b["problems"]))
    second = results[1]["id"]
    assert [r["outcome"]["summary"] for r in results] == [f"throw {n}" for n in (1, 2, 3, 4)]
    (problem,) = reported["problems"]
    assert problem.startswith(
        f"roll {second} (stored): drawing or announcing it failed (ValueError"
    )
    assert problem in caplog.text  # and in the log
    bars = [line for line in run.stdout.splitlines() if "◆" in line]  # the marker
    assert len(bars) == 1 + 3  # at the start, then rolls 1, 3 and 4: after the one not drawn


def test_the_retained_tower_never_blinks_empty_on_a_normal_start(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    settings = _broker(mosquitto)
    topic = Topics.of(settings).tower
    with Listener(settings, topic) as watcher:
        watcher.client.publish(topic, '{"v": 1, "state": "result"}', 1, True)  # an earlier run's
        watcher.wait_for(lambda m: m.payload.startswith(b"{"))
        _run(tmp_path / "s.db", settings, rolls=2)
        with Listener(settings, topic) as late:  # one that connects after the start
            assert json.loads(late.wait_for(lambda m: True).payload)["state"] == "result"
        seen = [m.payload for m in watcher.settled()]
    assert len(seen) > 2 and b"" not in seen


def test_a_link_given_the_loop_publishes_its_state_from_the_first_connect(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    settings = mosquitto.settings()
    topic = Topics.of(settings).tower
    config = sim_config(tmp_path / "s.db")
    with Listener(settings, topic) as watcher, Tower(config, simulated_parts(config, 0)) as tower:
        with table_link(tower.table, settings, tower.loop, loop=tower.loop) as publisher:
            assert publisher.client.wait_connected(WAIT)
            watcher.json_on(topic)
        seen = [m.payload for m in watcher.settled()]
    assert b"" not in seen and json.loads(seen[0])["state"] == "idle"


def test_the_page_shows_what_the_tower_carried_on_past(
    mosquitto: Mosquitto, tmp_path: Path, page: Page
) -> None:
    settings = mosquitto.settings()
    poisoned = _poisoned_store(tmp_path / "s.db")
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings) as publisher,
        DisplayServer(settings, port=free_port()) as server,
    ):
        publisher.tower_state("idle")
        page.goto(server.url)
        expect(page.locator("#tower-state")).to_have_text("ready")
        expect(page.locator("#problems-count")).to_have_text("The tower carried on past 5 problems")
        page.locator("#problems-count").click()
        problems = page.locator("#problems-panel li")
        expect(problems.last).to_contain_text(f"outbox event {poisoned[-1]} (roll) cannot be")
        expect(problems).to_have_count(5)  # the latest five
