"""Every rule system's Description (engine/describe.py) agrees with its rules: each mode's
fields are described, each param its check takes is a field, the settings' defaults are
the defaults, a setting out of bounds is refused by name, and it all goes on the wire."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from tidetower.engine.codec import dump
from tidetower.engine.describe import CONTEXT_FIELDS, Description
from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext, RuleError, RuleSystem
from tidetower.engine.systems import get_system, system_names, unregister
from tidetower.engine.systems.battle_rhythm import declare as rhythm
from tidetower.engine.systems.d6_pool import actions as d6
from tidetower.engine.systems.graded_d100 import declare as graded
from tidetower.engine.systems.tide import declare as tide
from tidetower.engine.systems.tide_of_battle import declare as battle
from tidetower.engine.systems.tide_of_battle import tide as battle_tide

HIGH_DIE = "high-die"
SYSTEMS = [*system_names(), HIGH_DIE]
PARAMS: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "d6-pool": {mode: params for mode, (_, params, _) in d6.MODES.items()},
    "battle-rhythm": rhythm.MODE_PARAMS,
    "graded-d100": graded.MODE_PARAMS,
    "tide-of-battle": battle.MODE_PARAMS,
    "tide": dict.fromkeys(tide.MODES, tide.OWN_FIELDS),
    HIGH_DIE: {"throw": ()},
}
"""Each system's modes and the params its check takes in each (its own tables)."""


@pytest.fixture(scope="module", autouse=True)
def high_die() -> Iterator[None]:
    """The test-only high-die system registered, as tests/test_new_system.py does it."""
    assert HIGH_DIE not in system_names()
    importlib.import_module("systems.high_die")
    yield
    unregister(HIGH_DIE)
    sys.modules.pop("systems.high_die", None)


def _system(name: str) -> tuple[RuleSystem[Any], Description]:
    system = get_system(name)
    return system, system.describe()


def test_every_system_has_its_own_tables() -> None:
    assert sorted(PARAMS) == sorted(SYSTEMS)


@pytest.mark.parametrize("name", SYSTEMS)
def test_each_modes_fields_are_described(name: str) -> None:
    _, table = _system(name)
    described = {f.name for f in table.fields}
    for mode in table.modes:
        assert set(mode.fields) <= described, mode.name
    assert len(described) == len(table.fields), "a field is described twice"
    if table.default_mode:
        assert table.default_mode in {m.name for m in table.modes}


@pytest.mark.parametrize("name", SYSTEMS)
def test_the_modes_are_the_ones_the_check_takes_with_their_params(name: str) -> None:
    _, table = _system(name)
    modes = {m.name: m for m in table.modes}
    assert sorted(modes) == sorted(PARAMS[name])
    for mode, params in PARAMS[name].items():
        own = {f for f in modes[mode].fields if f not in CONTEXT_FIELDS}
        assert own == set(params) - {"side"}, mode  # tide-of-battle's side is also a param


def test_d6_pool_modes_throw_as_its_table_says() -> None:
    modes = {m.name: m for m in get_system("d6-pool").describe().modes}
    assert {name: m.throws for name, m in modes.items()} == {
        name: throws for name, (_, _, throws) in d6.MODES.items()
    }
    assert "pool" in modes["action"].fields and "reply_to" in modes["contest"].fields
    assert "pool" not in modes["fortune"].fields


@pytest.mark.parametrize("name", SYSTEMS)
def test_choices_are_listed_for_every_choice_field(name: str) -> None:
    _, table = _system(name)
    for f in (*table.settings, *table.fields):
        assert (f.kind == "choice") == bool(f.choices), f.name
        if f.kind == "choice" and f.default is not None:
            assert f.default in f.choices, f.name


@pytest.mark.parametrize("name", SYSTEMS)
def test_the_settings_defaults_are_the_systems_defaults(name: str) -> None:
    system, table = _system(name)
    defaults = {f.name: f.default for f in table.settings}
    assert system.initial_state(defaults) == system.initial_state({})
    for key, value in defaults.items():
        assert system.initial_state({key: value}) == system.initial_state({}), key


@pytest.mark.parametrize("name", SYSTEMS)
def test_a_whole_setting_out_of_bounds_is_refused_by_name(name: str) -> None:
    system, table = _system(name)
    for f in table.settings:
        for bound, past in ((f.maximum, 1), (f.minimum, -1)):
            if f.kind != "whole" or bound is None:
                continue
            with pytest.raises(RuleError) as refused:
                system.initial_state({f.name: bound + past})
            assert refused.value.field == f.name


@pytest.mark.parametrize("name", SYSTEMS)
def test_the_description_goes_on_the_wire(name: str) -> None:
    _, table = _system(name)
    wire = json.loads(json.dumps(dump(table)))
    assert wire["tracker"]["kind"] == table.tracker.kind
    assert [f["name"] for f in wire["settings"]] == [f.name for f in table.settings]


def test_tide_of_battle_describes_every_setting_it_takes() -> None:
    described = [f.name for f in get_system("tide-of-battle").describe().settings]
    assert sorted(described) == sorted(battle_tide.SETTING_KEYS)


def test_settings_typed_at_a_terminal_read_as_the_mappings_do() -> None:
    rhythm_system, battle_system = get_system("battle-rhythm"), get_system("tide-of-battle")
    typed = rhythm_system.initial_state({"mobility": ["Ash:3", "Bree:-1"]})
    assert typed == rhythm_system.initial_state({"mobility": {"Ash": 3, "Bree": -1}})
    with pytest.raises(RuleError) as refused:
        rhythm_system.initial_state({"mobility": ["Ash:fast"]})
    assert refused.value.field == "mobility"
    shown = battle_system.initial_state({"numbers": ["13", "4"], "morale": ["3", "1"]})
    assert shown == battle_system.initial_state({"numbers": [13, 4], "morale": [3, 1]})


def _d6(*faces: int) -> Roll:
    return Roll(tuple(Die(DieKind.D6, f) for f in faces))


def test_d6_pool_summaries_read_as_sentences() -> None:
    system = get_system("d6-pool")
    table = system.initial_state({})
    one = system.resolve(table, RollContext(actor="Kira", pool=2), _d6(5, 2), {})[1]
    assert one.summary == "Kira: 1 hit vs difficulty 1: partial"
    two = RollContext(actor="Kira", pool=2, params={"difficulty": 1})
    assert (
        "2 hits vs difficulty 1: full, 1 excess"
        in system.resolve(table, two, _d6(5, 4), {})[1].summary
    )
    opening = system.resolve(table, RollContext(actor="Kira", mode="contest", pool=1), _d6(3), {})
    assert "None" not in opening[1].summary


def test_d6_pool_bar_has_no_words_without_a_clock() -> None:
    system = get_system("d6-pool")
    bar = system.bar(system.initial_state({}))
    assert (bar.label_a, bar.label_b, bar.segments) == ("", "", ())
    assert system.describe().tracker.kind == "clocks"


def test_an_undefended_attack_says_so_and_the_count_bar_names_no_count() -> None:
    system = get_system("battle-rhythm")
    scene = system.initial_state({})
    outcome = system.resolve(scene, RollContext(actor="Ash", mode="attack"), _d6(3, 4), {})[1]
    assert outcome.summary == "Ash lands (no intervention of fate, undefended)"
    bar = system.bar(scene)
    assert "Count" not in bar.label_a + bar.label_b
    assert system.describe().tracker.kind == "count"
