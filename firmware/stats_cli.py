"""`tidetower stats dice`: is each die fair? Its faces counted from the store, read-only."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from tidetower.engine.digest import body_dice
from tidetower.engine.rules import RuleError
from tidetower.engine.stats import Counted, DieSummary, summaries
from tidetower.engine.store import SessionStore, StoreError
from tidetower.engine.tray import DIE_NAMES
from tidetower.firmware.assign import store_option
from tidetower.firmware.luck_cli import (
    bounded_record,
    print_luck,
    say_skipped,
    stored_records,
    summary_luck,
    write_picture,
)

CAVEAT = (
    "p is how often a fair die would look at least this uneven. 'No sign of bias' is not proof"
    " of fairness: a bias smaller than the one the throws-needed figure is for can hide in"
    " these throws, and 'too few throws to tell' means just that. Dice are told apart by the"
    " name the camera gave them (a taught die's, else its colour and kind: 'red d20'); dice it"
    " could not name count under their kind."
)


def since_epoch(day: datetime | None) -> float | None:
    """Midnight UTC at the start of `day`, in seconds since the epoch (None: no limit)."""
    if day is None:
        return None
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()


def bounded_dice(body: dict[str, Any]) -> tuple[Counted, ...]:
    """The dice of a stored roll a command could have made (as stats luck reads it)."""
    bounded_record(body)
    return body_dice(body)


def stored_dice(store: Path, since: float | None = None) -> Counter[Counted]:
    """How often each die showed each face in the store's rolls (since `since`), typed
    ones apart; the store opened read-only, its rolls read one at a time."""
    if not store.exists():
        raise click.ClickException(f"no session at {store}")
    try:
        with SessionStore(store, read_only=True) as reader:
            found = Counter(die for dice in reader.records(bounded_dice, since) for die in dice)
            say_skipped(reader.skipped)
            return found
    except (StoreError, RuleError, sqlite3.Error, ValueError) as error:
        raise click.ClickException(f"cannot read {store}: {error}") from None


def summary_json(summary: DieSummary) -> dict[str, Any]:
    """One die's figures as JSON."""
    named = {"named": summary.name} if summary.name != summary.kind else {}
    return {
        "die": summary.kind,
        **named,
        "throws": summary.throws,
        "typed": summary.typed,
        "faces": {str(f): c for f, c in zip(summary.faces, summary.counts, strict=True)},
        "expected": summary.expected,
        "chi2": summary.chi2,
        "df": len(summary.faces) - 1,
        "p": summary.p,
        "most": {"face": summary.most[0], "count": summary.most[1]},
        "least": {"face": summary.least[0], "count": summary.least[1]},
        "throws_needed": summary.needed,
        "more_needed": max(0, summary.needed - summary.throws),
        "verdict": summary.verdict,
    }


def summary_lines(s: DieSummary) -> list[str]:
    """One die's figures as the terminal shows them."""
    title = s.name if s.name == s.kind or s.name.endswith(s.kind) else f"{s.name} ({s.kind})"
    lines = [f"{title}: {s.throws} throws ({s.typed} typed by the GM)", "  face  count"]
    lines += [f"  {f:>4}  {c:>5}" for f, c in zip(s.faces, s.counts, strict=True)]
    (hi, hi_n), (lo, lo_n) = s.most, s.least
    lines += [
        f"  expected per face {s.expected:.1f}; most {hi} ({hi_n}), least {lo} ({lo_n})",
        f"  chi-squared {s.chi2:.2f} on {len(s.faces) - 1} degrees of freedom, p = {s.p:.3g}",
        f"  verdict: {s.verdict}",
        f"  a 10 % bias on one face takes about {s.needed} throws to tell (5 % level, 80 %"
        f" power): {max(0, s.needed - s.throws)} more",
    ]
    return lines


def print_summaries(found: Sequence[DieSummary], as_json: bool) -> None:
    """Print the dice's figures, and plainly what they can and cannot say."""
    if as_json:
        click.echo(json.dumps({"dice": [summary_json(s) for s in found], "note": CAVEAT}))
        return
    if not found:
        click.echo("no dice thrown yet (in these dates)")
    for summary in found:
        click.echo("\n".join(summary_lines(summary)))
    click.echo(CAVEAT)


def store_of(store: Path, config: Path | None) -> Path:
    """The store to read: the config's `[table] store` when a config is given."""
    if config is None:
        return store
    from tidetower.firmware.config import load_config  # the config pulls in the camera side

    try:
        return load_config(config).table.store
    except (OSError, ValueError) as error:
        raise click.ClickException(f"cannot read {config}: {error}") from None


config_option = click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A tower's TOML config: read its [table] store instead of --store.",
)
since_option = click.option(
    "--since",
    type=click.DateTime(["%Y-%m-%d"]),
    default=None,
    help="From midnight UTC of this day.",
)


@click.group("stats")
def stats_group() -> None:
    """Figures from the session's stored rolls; the store is only read."""


@stats_group.command("dice")
@store_option
@config_option
@click.option(
    "--die",
    "only",
    default=None,
    metavar="NAME",
    help="One die only: its name ('white omen', 'red d20') or a kind (all its dice).",
)
@since_option
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def dice(
    store: Path, config: Path | None, only: str | None, since: datetime | None, as_json: bool
) -> None:
    """Is each die fair? Faces counted, a chi-squared test, throws needed to tell."""
    found = summaries(stored_dice(store_of(store, config), since_epoch(since)), only)
    if only is not None and not found and only not in DIE_NAMES:
        raise click.ClickException(
            f"no die named {only!r} was thrown (in these dates): give a die's name as the"
            f" stats show it, or a kind ({', '.join(DIE_NAMES)})"
        )
    print_summaries(found, as_json)


@stats_group.command("luck")
@store_option
@config_option
@since_option
@click.option("--actor", default=None, help="One actor's throws only.")
@click.option("--top", default=3, show_default=True, help="How many best and worst throws.")
@click.option("--moves", default=20, show_default=True, help="The bar's last moves shown.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON (every move).")
def luck(
    store: Path,
    config: Path | None,
    since: datetime | None,
    actor: str | None,
    top: int,
    moves: int,
    as_json: bool,
) -> None:
    """How lucky was the table? Each throw against its odds, per actor and side."""
    path = store_of(store, config)
    if since is None and actor is None and not as_json and summary_luck(path, top, moves):
        return  # from the summary the store keeps (issue 37): a year need not be read again
    print_luck(stored_records(path, since_epoch(since)), actor, as_json, top, moves)


@stats_group.command("tracker")
@store_option
@config_option
@since_option
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="The SVG file to write.",
)
def tracker(store: Path, config: Path | None, since: datetime | None, out: Path) -> None:
    """The bar's story over the throws as a small SVG: each move, who moved it, routs."""
    line = write_picture(stored_records(store_of(store, config), since_epoch(since)), out)
    click.echo(f"wrote {out}: {len(line.steps)} throws of {line.system}, {line.moves} moves")


stats_group.add_command(tracker, "tide")
"""The bar is the `tide` topic on the wire, and a table asks for its story by that name too."""
