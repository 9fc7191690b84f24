"""`tidetower odds`: pool, marks and d100 as tables and as JSON."""

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


def test_marks_json_has_marks_margin_and_steps() -> None:
    code, out = run(
        "marks",
        "--dice",
        "3",
        "--tier",
        "d8",
        "--vs",
        "2",
        "--vs-tier",
        "d6",
        "--size",
        "battle",
        "--json",
    )
    data = json.loads(out)
    assert code == 0 and set(data) >= {"marks", "margin", "steps"}
    for key in ("marks", "margin", "steps"):
        assert abs(sum(data[key].values()) - 1) < 1e-9
    assert data["marks"]["3"] == 0.125


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
        (("marks", "--dice", "-1", "--tier", "d8"), "dice"),
        (("marks", "--dice", "2", "--tier", "d8", "--marks-step", "9"), "marks step"),
    ],
)
def test_bad_values_are_usage_errors_naming_the_field(args: tuple[str, ...], field: str) -> None:
    code, out = run(*args)
    assert code == 2 and field in out


@pytest.mark.parametrize("command", ["pool", "marks", "d100"])
def test_every_subcommand_has_help(command: str) -> None:
    code, out = run(command, "--help")
    assert code == 0 and "--json" in out
