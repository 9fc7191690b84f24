"""The fuzz suite of issue 17: commands drawn from every command's schema and the table's
own practice turns, and hostile mutations of them (wrong types, deep nesting, lone
surrogates, huge numbers, NaN, broken bytes, the retain flag). In process, through the
command layer: every reply names the request's id when it has one, a refusal changes nothing,
and whatever the tower accepts it can store, publish, draw and reload (tests/fuzz_checks.py).
Live, against `tidetower run --sim` on a real Mosquitto with rolls in flight: every message
gets its reply, the tower stays alive, stops cleanly, runs no retained command on restart,
and its retained `tide` reloads (tests/fuzz_live.py).

A longer run: `python bench/fuzz_commands.py` (docs/BENCHMARKS.md)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from fuzz_checks import apply_checked, check_store
from fuzz_live import check_restart, fuzz_live, live_tower
from fuzz_strategies import messages, schema_body, vocabulary
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from mqtt_fixtures import Mosquitto

from tidetower.engine.systems import system_names
from tidetower.engine.table import Table
from tidetower.mqtt import registry
from tidetower.mqtt.bodies import Refused, checked
from tidetower.mqtt.commands import CommandDesk

COMMANDS = 25
"""The most commands one example sends to one table."""


@pytest.mark.parametrize("name", sorted(registry.COMMANDS))
def test_every_command_is_fuzzed_from_its_schema(name: str) -> None:
    """A command added to the registry is fuzzed with no change here: its schema alone
    yields bodies it accepts (and, mutated, bodies it refuses)."""
    kind = registry.COMMANDS[name].model

    def accepted(body: dict[str, object]) -> bool:
        try:
            checked(kind, body)
        except Refused:
            return False
        return True

    quick = settings(phases=[Phase.generate], database=None, max_examples=1000)  # unshrunk
    assert accepted(find(schema_body(kind, vocabulary()), accepted, settings=quick))


@pytest.mark.slow
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_fuzzed_commands_change_the_table_only_when_accepted(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.db"
        with Table(path, data.draw(st.sampled_from(system_names()), label="system")) as table:
            desk = CommandDesk(table)
            for _ in range(data.draw(st.integers(1, COMMANDS), label="commands")):
                apply_checked(desk, data.draw(messages(table.state), label="message"))
            state = table.state
        check_store(path, state)


@pytest.mark.slow
def test_a_running_tower_answers_fuzzed_commands_with_rolls_in_flight(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    with live_tower(mosquitto, mosquitto.settings(), tmp_path / "s.db") as live:
        fuzz_live(live, examples=40, batch_size=12)
        check_restart(live)
