"""A rule system added as one folder (tests/systems/high_die) shows up everywhere a system
does: the session CLI, the declared roll's odds (CLI, retained `session`, the page), the
simulated tower, and, installed, through the `tidetower.systems` entry points."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import random
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from mqtt_fixtures import Mosquitto, free_port
from playwright.sync_api import Page, expect

from tidetower.engine import session as pure
from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.simdice import SimulatedDice
from tidetower.engine.systems import get_system, system_names, unregister
from tidetower.engine.table import Table
from tidetower.firmware.cli import main
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.views import session_payload

SYSTEM = "high-die"
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
PACKAGES = ("engine", "vision", "mqtt", "firmware", "enclosure")
RUN = (sys.executable, "-m", "tidetower.firmware.cli", "run", "--sim", "--no-mqtt")


@pytest.fixture(scope="module")
def high_die() -> Iterator[str]:
    """The high-die system, registered by importing its folder; put away after the module."""
    assert SYSTEM not in system_names()
    importlib.import_module("systems.high_die")
    yield SYSTEM
    unregister(SYSTEM)
    sys.modules.pop("systems.high_die", None)


def test_no_package_names_the_new_system() -> None:
    named = [
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*")
        if path.suffix in (".py", ".js", ".html")
        and any(word in path.read_text(encoding="utf-8") for word in ("high-die", "high_die"))
    ]
    assert named == []


def test_every_package_folder_is_installed() -> None:
    """A new system folder must be in pyproject's packages, or an install leaves it out."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    folders = {
        "tidetower." + ".".join(init.parent.relative_to(ROOT).parts)
        for package in PACKAGES
        for init in (ROOT / package).rglob("__init__.py")
    }
    assert folders - listed == set()


def _cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_the_session_cli_plays_it_and_prints_its_odds(high_die: str, tmp_path: Path) -> None:
    store = ("--store", str(tmp_path / "s.db"))
    assert _cli("session", "system", high_die, *store) == f"now playing {high_die}\n"
    assert f"system {high_die}" in _cli("session", "show", *store)
    assert "nothing is declared" in _cli("odds", "declared", *store)
    _cli("session", "declare", "--actor", "Ivo", "--side", "b", *store)
    shown = _cli("odds", "declared", *store)
    assert f"{high_die}: 1d6 at 4+, mean 0.5 steps" in shown
    assert "pushes" in shown and " 50.000%" in shown
    body = json.loads(_cli("odds", "declared", "--json", *store))
    assert body["outcomes"] == [
        {"label": "pushes", "chance": 0.5},
        {"label": "holds", "chance": 0.5},
    ]
    assert "6: pushed" in _cli("session", "roll", "d6=6", *store)
    assert json.loads(_cli("session", "show", "--json", *store))["bar"]["position"] == 1


def test_an_unknown_system_is_refused_by_the_same_cli(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["session", "system", "low-die", "--store", str(tmp_path / "s.db")]
    )
    assert result.exit_code == 1 and "unknown rule system 'low-die'" in result.output


def test_the_retained_session_carries_its_odds(high_die: str) -> None:
    state = pure.declare(pure.new_session("t", high_die, {"target": 5}), RollContext(side="a"))
    odds = session_payload(state).odds
    assert odds is not None
    assert (odds.counts, odds.dice, odds.mean) == ("steps", "1d6 at 5+", round(1 / 3, 4))
    rows = [(row.value, row.chance, row.at_least) for row in odds.rows]
    assert rows == [(0, float(Fraction(2, 3)), 1.0), (1, float(Fraction(1, 3)), 1 / 3)]
    assert {o.label: o.chance for o in odds.outcomes} == {"pushes": 1 / 3, "holds": 2 / 3}


def test_the_page_shows_its_bar_and_odds(
    high_die: str, mosquitto: Mosquitto, tmp_path: Path, page: Page
) -> None:
    settings = mosquitto.settings()
    table = Table(tmp_path / "s.db", system=high_die)
    with (
        TablePublisher(table, settings) as publisher,
        DisplayServer(settings, port=free_port()) as server,
    ):
        page.goto(server.url)
        expect(page.locator("#bar .cell")).to_have_count(7)  # -3 .. 3
        expect(page.locator("#tracker-position")).to_have_text("0")
        table.declare(RollContext(actor="Ivo", side="b"))
        odds = page.locator("#odds")
        expect(odds.locator("p")).to_have_text("Odds for 1d6 at 4+: mean 0.5 steps")
        expect(odds.locator(".outcome", has_text="pushes")).to_contain_text("50.0%")
        publisher.record(Roll((Die(DieKind.D6, 6),)))
        expect(page.locator("#outcome")).to_have_text("6: pushed")
        expect(page.locator("#tracker-position")).to_have_text("1")


def _practise(name: str, turns: int) -> tuple[int, int]:
    """Play `turns` practice turns of a system in the engine: (throws, throws recorded)."""
    state = pure.new_session(name, name, {})
    system, dice, players = get_system(name), SimulatedDice(seed=3), random.Random(3)
    thrown = 0
    for _ in range(turns):
        turn = system.practice_turn(state.tracker, state.history, players, {})
        if turn.reset is not None:
            state = pure.reset_tracker(state, turn.reset)
        if turn.context is not None:
            state = pure.declare(state, turn.context)
        if turn.dice:  # none named: a handful of d6, which the GM may have to fix
            thrown += 1
            with contextlib.suppress(RuleError):  # e.g. a pair of 6s owes a bonus die
                state, _ = pure.record_roll(state, dice.throw(*((1, k) for k in turn.dice)))
    return thrown, len(state.history)


def test_every_system_starts_from_no_settings_and_its_practice_is_played(high_die: str) -> None:
    for name in system_names():
        thrown, recorded = _practise(name, 12)
        assert recorded >= thrown * 3 // 4, name
    assert _practise(high_die, 12) == (12, 12)
    tide = get_system("tide")  # the simulated tower's Tide settings are the defaults
    assert tide.initial_state({}) == tide.initial_state(
        {"weight_a": 8, "weight_b": 8, "size": "skirmish"}
    )


def test_the_tides_practice_options_choose_its_dice() -> None:
    tide = get_system("tide")
    state = tide.initial_state({})
    options = {"tiers": ["d8"], "omen": False}
    for seed in range(5):
        turn = tide.practice_turn(state, (), random.Random(seed), options)
        assert set(turn.dice) == {DieKind.D8} and 2 <= len(turn.dice) <= 5
    assert DieKind.D20 in tide.practice_turn(state, (), random.Random(0), {}).dice


def _plugin(folder: Path) -> Path:
    """A distribution that declares high-die in the `tidetower.systems` entry points."""
    info = folder / "high_die_plugin-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: high-die-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[tidetower.systems]\nhigh-die = systems.high_die:HighDieSystem\n"
    )
    return folder


@pytest.mark.slow
def test_an_installed_system_runs_in_the_simulated_tower(tmp_path: Path) -> None:
    path = f"{_plugin(tmp_path / 'site')}:{TESTS}"
    store = str(tmp_path / "s.db")
    run = subprocess.run(
        [*RUN, "--system", SYSTEM, "--rolls", "3", "--json", "--fast", "--store", store],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert run.returncode == 0, run.stderr
    rolls = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert [r["system"] for r in rolls] == [SYSTEM] * 3
    assert all([d["die"] for d in r["dice"]] == ["d6"] for r in rolls)
