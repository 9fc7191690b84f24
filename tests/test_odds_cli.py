"""`tidetower odds`: a roll of any system, pool and d100 as tables and as JSON."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tidetower.engine.systems.d6_pool.odds import pool_odds
from tidetower.firmware.cli import main


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["odds", *args])
    return result.exit_code, result.output


def test_pool_json_matches_the_engine() -> None:
    code, out = run("pool", "--dice", "4", "--json")
    assert code == 0
    data = json.loads(out)
    odds = pool_odds(4)
    assert data["bad"] == float(odds.bad) and data["full"] == float(odds.full)
    assert round(data["explosion"] * 100, 1) == 13.2
    assert abs(sum(data["hits"].values()) - 1) < 1e-9 and data["truncated"] == 0


def test_pool_table_lists_outcomes_and_hits() -> None:
    code, out = run("pool", "--dice", "2", "--difficulty", "1", "--threshold", "4")
    assert code == 0
    assert "hits on 4+" in out and "partial" in out and "explosion" in out
    assert "50.000%" in out  # exactly one hit of two dice at 4+


def test_traitor_pool_at_minus_two() -> None:
    code, out = run("pool", "--dice", "-2", "--json")
    data = json.loads(out)
    assert code == 0 and data["traitor"] and round(data["partial"] * 100) == 20


def test_a_tide_roll_gives_its_marks_and_where_the_bar_moves() -> None:
    args = ("roll", "--system", "tide", "--mode", "unopposed", "--side", "a", "pool=3")
    code, out = run(*args, "tier=d8", "tide_linked=true", "--set", "size=battle", "--json")
    data = json.loads(out)
    assert code == 0 and data["counts"] == "Marks" and data["dice"] == "3d8"
    assert {row["value"]: row["chance"] for row in data["rows"]}[3] == 0.125
    assert abs(sum(o["chance"] for o in data["outcomes"]) - 1) < 1e-9
    code, out = run(*args, "tier=d8", "tide_linked=true")
    assert code == 0 and "Marks" in out and "12.500%" in out and "holds" in out


def test_a_roll_of_any_system_comes_from_its_own_odds() -> None:
    code, out = run("roll", "--system", "d6-pool", "--mode", "action", "pool=4", "--json")
    data = json.loads(out)
    odds = pool_odds(4)
    assert code == 0 and data["explosion"] == float(odds.explosion)
    code, out = run("roll", "--system", "d6-pool", "--mode", "new-clock", "clock=A", "size=4")
    assert code == 0 and "no odds" in out
    code, out = run("roll", "--system", "tide", "--json")  # nothing declared to count
    assert code == 0 and out.strip() == "null"


def test_d100_lists_every_grade() -> None:
    code, out = run("d100", "--chance", "65")
    assert code == 0
    for grade in ("CRITICAL", "CLEAN", "SOLID", "GLANCING", "DEFLECTED", "WHIFF", "BACKFIRE"):
        assert grade in out
    data = json.loads(run("d100", "--chance", "65", "--json")[1])
    assert data["grades"]["CRITICAL"] == 0.4


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("pool", "--dice", "3", "--difficulty", "0"), "difficulty"),
        (("d100", "--chance", "120"), "chance"),
        (("roll", "--system", "tide", "pool=-1", "tier=d8"), "pool"),
        (("roll", "--system", "tide", "--set", "marks_step=999", "pool=2"), "marks_step"),
        (("roll", "--system", "tide", "rating=2"), "rating"),
        (("roll", "--system", "nonsense"), "nonsense"),
    ],
)
def test_bad_values_are_usage_errors_naming_the_field(args: tuple[str, ...], field: str) -> None:
    code, out = run(*args)
    assert code == 2 and field in out


@pytest.mark.parametrize("command", ["pool", "roll", "d100", "declared"])
def test_every_subcommand_has_help(command: str) -> None:
    code, out = run(command, "--help")
    assert code == 0 and "--json" in out
