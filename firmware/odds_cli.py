"""`tidetower odds`: exact odds a table can see before it rolls: a roll declared under any
rule system (`roll`), the roll declared in the session (`declared`), and two systems' own
tables (`pool`, `d100`).

Every number is counted exactly by the rule systems' odds (each system's odds.py), never
sampled; the table shows percentages, `--json` gives the probabilities as floats.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any, TypeVar

import click

from tidetower.engine.chances import Odds
from tidetower.engine.codec import load
from tidetower.engine.dice import DieError
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.session import declared_odds
from tidetower.engine.systems import get_system
from tidetower.engine.systems.d6_pool.odds import pool_odds
from tidetower.engine.systems.graded_d100.grades import DAMAGE
from tidetower.engine.systems.graded_d100.odds import d100_odds
from tidetower.firmware.assign import (
    SystemHelp,
    active_system,
    describe,
    read_declared,
    read_settings,
    store_option,
)
from tidetower.firmware.session_cli import open_table
from tidetower.mqtt.views import odds_body

F = TypeVar("F", bound=Callable[..., Any])


def _json_option(command: F) -> F:
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Print JSON (probabilities as floats) instead of a table.",
    )(command)


def _engine_errors(run: Callable[[], None]) -> None:
    """Run `run`; a bad value the engine rejects becomes a one-line usage error."""
    try:
        run()
    except (RuleError, DieError) as error:
        raise click.UsageError(str(error)) from None


def _floats(dist: Mapping[Any, Fraction]) -> dict[str, float]:
    return {str(k): float(v) for k, v in dist.items()}


def _pct(value: Fraction) -> str:
    return f"{float(value) * 100:8.3f}%"


def _table(title: str, dist: Mapping[Any, Fraction]) -> None:
    click.echo(title)
    for key, value in dist.items():
        click.echo(f"  {key!s:>10}  {_pct(value)}")


@click.group("odds", context_settings={"help_option_names": ["-h", "--help"]})
def odds_group() -> None:
    """Exact odds of a roll before it is thrown (counted, not sampled)."""


@odds_group.command("pool")
@click.option(
    "--dice",
    "-n",
    type=int,
    required=True,
    help="Net dice of the action roll; 0 or less throws 2 - N traitor dice.",
)
@click.option(
    "--difficulty",
    "-d",
    type=int,
    default=1,
    show_default=True,
    help="Hits needed for a partial success (at least 1).",
)
@click.option(
    "--threshold",
    type=click.Choice(["3", "4"]),
    default="3",
    show_default=True,
    help="Lowest face that hits: 3 for skill rolls, 4 for Strike/Defend.",
)
@_json_option
def pool_command(dice: int, difficulty: int, threshold: str, as_json: bool) -> None:
    """An action roll of the d6 pool rules (`d6-pool`): bad / partial / full, explosions, hits."""

    def run() -> None:
        odds = pool_odds(dice, difficulty, int(threshold))
        data = {
            "dice": dice,
            "difficulty": difficulty,
            "threshold": int(threshold),
            "traitor": odds.traitor,
            "bad": float(odds.bad),
            "partial": float(odds.partial),
            "full": float(odds.full),
            "explosion": float(odds.explosion),
            "hits": _floats(odds.hits),
            "exact": True,
            "truncated": 0.0,
        }
        if as_json:
            click.echo(json.dumps(data))
            return
        kind = f"{2 - dice} traitor dice" if odds.traitor else f"{dice} dice"
        click.echo(
            f"d6 pool: {kind}, hits on {threshold}+, difficulty {difficulty} "
            "(exact: every exploding chain counted, nothing truncated)"
        )
        _table(
            "outcome",
            {
                "bad": odds.bad,
                "partial": odds.partial,
                "full": odds.full,
                "explosion": odds.explosion,
            },
        )
        _table("hits", odds.hits)

    _engine_errors(run)


@odds_group.command("roll", cls=SystemHelp)
@store_option
@click.option(
    "--system",
    "system_name",
    default=None,
    help="The rule system (default: the one the session in --store plays).",
)
@click.option("--mode", default="", help="The system's mode (listed below).")
@click.option("--pool", type=int, default=None, help="Dice in the pool.")
@click.option("--side", type=click.Choice(["a", "b"]), default=None, help="The roller's side.")
@click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="NAME=VALUE",
    help="A setting of the tracker thrown at, as `session setup` takes it (repeatable).",
)
@click.argument("fields", nargs=-1, metavar="[NAME=VALUE]...")
@_json_option
def roll_command(
    store: Path,
    system_name: str | None,
    settings: tuple[str, ...],
    fields: tuple[str, ...],
    as_json: bool,
    **shared: Any,
) -> None:
    """A roll declared as `session declare` declares it, under any rule system: what it
    comes to, each value's chance and its outcomes, on a tracker set up afresh."""
    name = system_name or active_system(store)
    _engine_errors(lambda: _show_roll(name, settings, {**shared, **_fields(name, fields)}, as_json))


def _fields(system: str, fields: tuple[str, ...]) -> dict[str, Any]:
    """The declaration's NAME=VALUE fields, read by the system's description."""
    return read_declared(describe(system), fields)


def _show_roll(
    name: str, settings: tuple[str, ...], declared: dict[str, Any], as_json: bool
) -> None:
    """Print the odds of `declared` on `name`'s tracker set up with `settings`."""
    system = get_system(name)
    state = system.initial_state(read_settings(system.describe(), settings))
    context: RollContext = load(RollContext, declared)
    system.check_context(state, context)
    odds = system.odds(state, context, {})
    if as_json:
        click.echo("null" if odds is None else odds_body(odds).model_dump_json())
    elif odds is None:
        click.echo(f"{name}: no odds: the roll declared throws nothing to count")
    else:
        _print_odds(name, odds)


@odds_group.command("d100")
@click.option("--chance", "-p", type=int, required=True, help="Hit chance in percent (0..100).")
@_json_option
def d100_command(chance: int, as_json: bool) -> None:
    """A graded d100 roll (`graded-d100`): the chance of each grade, rolled under the hit chance."""

    def run() -> None:
        odds = d100_odds(chance)
        if as_json:
            click.echo(json.dumps({"chance": chance, "grades": _floats(odds), "exact": True}))
            return
        click.echo(f"d100 under {chance}% (exact)")
        for name, value in odds.items():
            click.echo(f"  {name:>10}  x{float(DAMAGE[name]):<5g} {_pct(value)}")

    _engine_errors(run)


def _print_odds(system: str, odds: Odds) -> None:
    """The odds as a table: what the roll comes to, then each value with its name."""
    click.echo(f"{system}: {odds.dice}, mean {float(odds.mean):.4g} {odds.counts} (exact)")
    extras = dict(odds.outcomes)
    if odds.explosion is not None:
        extras["6s explode"] = odds.explosion
    if extras:
        _table("outcome", extras)
    click.echo(f"{odds.counts}  (chance, chance of this or more)")
    for value in odds.values():
        name = odds.labels.get(value, "")
        chance, more = _pct(odds.distribution[value]), _pct(odds.at_least(value))
        click.echo(f"  {value:>10}  {chance}  {more}  {name}".rstrip())


@odds_group.command("declared")
@store_option
@_json_option
def declared_command(store: Path, as_json: bool) -> None:
    """The roll declared in the session, under whatever rule system the table plays."""
    with open_table(store) as table:
        state = table.state
    odds = declared_odds(state)
    if as_json:
        click.echo("null" if odds is None else odds_body(odds).model_dump_json())
    elif odds is None:
        click.echo(
            f"{state.system}: no odds: nothing is declared, or the declared roll "
            "throws nothing to count"
        )
    else:
        _print_odds(state.system, odds)
