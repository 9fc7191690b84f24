"""`tidetower stats luck` and `stats tracker`: the table's luck against the odds, and the
bar's story as an SVG, from the store's rolls read read-only."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import click

from tidetower.engine.barline import Barline, barline
from tidetower.engine.bounds import check_record
from tidetower.engine.digest import gc_paused, stored_summary
from tidetower.engine.luck import Luck, Move, Tally, Throw, luck
from tidetower.engine.replay import record_of
from tidetower.engine.rows import BadRow
from tidetower.engine.rules import RollRecord, RuleError
from tidetower.engine.store import SessionStore, StoreError
from tidetower.engine.summary import KEPT_MOVES, TOP, Summary
from tidetower.engine.systems import get_system
from tidetower.engine.who import Who
from tidetower.firmware.export import iso_time
from tidetower.firmware.picture import svg

CAVEAT = (
    "z compares the sum rolled with the sum the odds expected, in standard deviations of that"
    " sum; p is how often the odds would give a sum at least this far out either way, by a"
    " normal approximation (rough for a handful of throws). A throw's chance is that of"
    " rolling at least as much: lower is luckier. Higher counts are the roller's good fortune."
)


def stored_records(store: Path, since: float | None) -> list[RollRecord]:
    """The store's rolls (since `since`) as records, read-only, oldest first."""
    if not store.exists():
        raise click.ClickException(f"no session at {store}")
    try:
        with SessionStore(store, read_only=True) as reader, gc_paused():
            # the camera's reading left out: luck reads each throw's outcome, not its dice
            found = list(reader.records(bounded_record, since, ("reading",)))
            say_skipped(reader.skipped)
            return found
    except (StoreError, RuleError, sqlite3.Error, ValueError) as error:
        raise click.ClickException(f"cannot read {store}: {error}") from None


def bounded_record(body: dict[str, Any]) -> RollRecord:
    """A stored roll's record for the figures, within the bounds of a command."""
    return check_record(record_of(body))


def say_skipped(skipped: list[BadRow]) -> None:
    """Each stored roll that could not be read back, named on its own line on stderr."""
    for bad in skipped:
        click.echo(bad.line(), err=True)


def who_json(who: Who) -> dict[str, Any]:
    """Who threw, as JSON."""
    return {
        "roll_id": who.id,
        "actor": who.actor,
        "side": who.side,
        "system": who.system,
        "time": iso_time(who.at) or None,
    }


def throw_json(t: Throw) -> dict[str, Any]:
    """One counted throw as JSON."""
    return who_json(t.who) | {
        "counts": t.shape.counts,
        "dice": t.shape.dice,
        "rolled": t.rolled,
        "label": t.label,
        "expected": t.shape.mean,
        "chance": t.chance,
        "chance_at_most": t.below,
    }


def tally_json(t: Tally) -> dict[str, Any]:
    """One actor's or side's figures as JSON."""
    return {
        "by": t.by,
        "name": t.name,
        "counts": t.counts,
        "throws": t.throws,
        "expected": t.expected,
        "rolled": t.rolled,
        "variance": t.variance,
        "z": t.z,
        "p": t.p,
        "verdict": t.verdict,
    }


def move_json(m: Move) -> dict[str, Any]:
    """One move of the bar as JSON."""
    return who_json(m.who) | {"cause": m.cause, "before": m.before, "after": m.after}


def luck_json(found: Luck, top: int) -> dict[str, Any]:
    """The table's luck as JSON: every uncounted throw and move, `top` best and worst."""
    return {
        "tallies": [tally_json(t) for t in found.tallies()],
        "best": [throw_json(t) for t in found.best(top)],
        "worst": [throw_json(t) for t in found.worst(top)],
        "uncounted": [who_json(u.who) | {"reason": u.reason} for u in found.uncounted],
        "moves": [move_json(m) for m in found.moves],
        "note": CAVEAT,
    }


def tally_line(t: Tally) -> str:
    """One actor's or side's figures on a line."""
    return (
        f"  {t.name}: {t.throws} throws, {t.counts} expected {t.expected:.1f}, rolled"
        f" {t.rolled} (z = {t.z:+.2f}, p = {t.p:.3g}): {t.verdict}"
    )


def throw_line(t: Throw, luckiest: bool = True) -> str:
    """One throw on a line: who, what, when and its chance (of as much, or as little)."""
    who = t.who.name
    at = iso_time(t.who.at) or "time unknown"
    return (
        f"  {who} ({t.who.id}, {at}): {t.shape.dice} rolled {t.label} {t.shape.counts},"
        f" expected {t.shape.mean:.2f}; chance of {'at least' if luckiest else 'at most'} that"
        f" {t.chance if luckiest else t.below:.3g}"
    )


def uncounted_lines(uncounted: Counter[str]) -> list[str]:
    """The throws without odds, a line per reason with how many."""
    return [f"  {n} throws: {reason}" for reason, n in uncounted.items()]


def move_line(m: Move) -> str:
    """One move of the bar on a line."""
    who = m.who.name
    cause = f", {m.cause}" if m.cause else ""
    return f"  {who} ({m.who.id}): {m.before}→{m.after}{cause}"


def luck_lines(found: Summary, top: int, moves: int) -> list[str]:
    """The table's luck as the terminal shows it; the last `moves` moves of the bar."""
    lines = [f"{found.throws} throws counted against their odds"]
    lines += ["per actor and side:", *[tally_line(t) for t in found.tallies]]
    lines += ["luckiest throws:", *[throw_line(t) for t in found.best[:top]]]
    lines += ["unluckiest throws:", *[throw_line(t, False) for t in found.worst[:top]]]
    if found.uncounted:
        lines += ["not counted:", *uncounted_lines(found.uncounted)]
    lines.append(f"the bar moved {found.moves} times" + (":" if found.moves else ""))
    shown = found.last_moves[-moves:] if moves else ()
    if len(shown) < found.moves:
        lines.append(f"  ... {found.moves - len(shown)} earlier moves (--json lists all)")
    return lines + [move_line(m) for m in shown] + [CAVEAT]


def luck_summary(found: Luck, top: int, moves: int) -> Summary:
    """The luck of some throws as `luck_lines` reads it: `top` best and worst, the last
    `moves` moves."""
    return Summary(
        tallies=tuple(found.tallies()),
        best=tuple(found.best(top)),
        worst=tuple(found.worst(top)),
        throws=len(found.throws),
        uncounted=Counter(u.reason for u in found.uncounted),
        moves=len(found.moves),
        last_moves=found.moves[-moves:] if moves else (),
    )


def print_luck(
    records: list[RollRecord], actor: str | None, as_json: bool, top: int, moves: int
) -> None:
    """Work out the table's luck and print it."""
    with gc_paused():
        found = luck(records)
    if actor is not None:
        found = found.of(actor)
    if as_json:
        click.echo(json.dumps(luck_json(found, top)))
    else:
        print_summary(luck_summary(found, top, moves), top, moves)


def print_summary(found: Summary, top: int, moves: int) -> None:
    """The table's luck, summarised, on the terminal."""
    if not found.throws and not found.uncounted:
        click.echo("no throws yet (for this actor, in these dates)")
    else:
        click.echo("\n".join(luck_lines(found, top, moves)))


def summary_luck(store: Path, top: int, moves: int) -> bool:
    """Print the table's luck from the summary the store keeps and the rolls after it, if it
    keeps one and it holds what is asked for (False: it does not, nothing printed)."""
    if top > TOP or moves > KEPT_MOVES or not store.exists():
        return False
    try:
        with SessionStore(store, read_only=True) as reader:
            if reader.kept_summary() is None:
                return False
            found = stored_summary(reader)[1]
    except (StoreError, RuleError, sqlite3.Error, ValueError) as error:
        raise click.ClickException(f"cannot read {store}: {error}") from None
    say_skipped(list(found.skipped))
    print_summary(found, top, moves)
    return True


def write_picture(records: list[RollRecord], out: Path) -> Barline:
    """Draw the bar of the last throw's system over its throws into `out`."""
    if not records:
        raise click.ClickException("no throws yet (in these dates): nothing to draw")
    system = records[-1].system
    with gc_paused():
        line = barline(records, system)
    if line is None:
        raise click.ClickException(f"the {system} tracker cannot be read again: nothing to draw")
    end = get_system(system).describe().tracker.end
    title = f"{system}: the bar over {len(line.steps)} throws"
    out.write_text(svg(line, end, title), encoding="utf-8")
    return line
