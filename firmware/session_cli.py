"""`tidetower session`: the table session by hand, for a GM with dice and no tower."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from tidetower.engine.codec import dump
from tidetower.engine.dice import DieError
from tidetower.engine.rules import RollRecord, RuleError
from tidetower.engine.session import SessionState
from tidetower.engine.store import SessionStore, StoreError
from tidetower.engine.table import Table
from tidetower.firmware.assign import (
    SystemHelp,
    describe,
    read_declared,
    read_settings,
    store_option,
)
from tidetower.mqtt.bodies import Refused
from tidetower.mqtt.commands import CommandDesk, validate
from tidetower.mqtt.ledbar.terminal import render_bar
from tidetower.mqtt.typed_dice import parse_dice
from tidetower.mqtt.views import last_opening
from tidetower.mqtt.wording import declared_line


@contextmanager
def open_table(store: Path, create: bool = False) -> Iterator[Table]:
    """The stored table; engine errors become a clear one-line CLI error."""
    if not create and not store.exists():
        raise click.ClickException(
            f"no session at {store}: set one up with "
            "`tidetower session setup` (or give the right --store)"
        )
    try:
        with Table(store, wait_s=WAIT_FOR_WRITER_S) as table:
            yield table
    except (RuleError, DieError, StoreError) as error:
        raise click.ClickException(str(error)) from None


WAIT_FOR_WRITER_S = 5.0
"""How long a `session` command waits for another writer (a tower, another command) to let
go of the store before it says who holds it."""


def read_session(store: Path) -> SessionState:
    """The stored session, read without claiming the store: a running tower may hold it."""
    if not store.exists():
        raise click.ClickException(
            f"no session at {store}: set one up with "
            "`tidetower session setup` (or give the right --store)"
        )
    try:
        with SessionStore(store, read_only=True) as reader:
            state = reader.load()
            for bad in reader.skipped:
                click.echo(bad.line(), err=True)
    except (StoreError, sqlite3.Error) as error:
        raise click.ClickException(str(error)) from None
    if state is None:
        raise click.ClickException(f"no session at {store} yet")
    return state


def apply(table: Table, command: str, **body: Any) -> None:
    """Carry out the GM command `command` (the registry's, as on `cmd/<name>`) through the desk
    MQTT and the buttons use; a refusal is a one-line CLI error naming the field, and changes
    nothing."""
    try:
        CommandDesk(table).apply(validate(command, {"id": "cli", **body}))
    except Refused as refused:
        raise click.ClickException(refused.message) from None


def _print_record(record: RollRecord, as_json: bool, prefix: str = "") -> None:
    if as_json:
        click.echo(json.dumps(dump(record)))
        return
    faces = " ".join(str(d) for d in record.roll.dice) or "(no dice)"
    click.echo(f"{prefix}{record.id}: {faces} → {record.outcome.summary}")


@click.group("session")
def session_group() -> None:
    """Keep the table session by hand: set up the tracker, declare, enter dice, undo."""


@session_group.command("show")
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print the session as JSON.")
@click.option("--last", default=5, show_default=True, help="How many recent rolls to list.")
def show(store: Path, as_json: bool, last: int) -> None:
    """Show the rule system, the bar, the declared roll and the recent rolls."""
    state = read_session(store)  # read-only: works while the tower runs on the store
    if as_json:
        click.echo(
            json.dumps(
                {
                    "system": state.system,
                    "bar": dump(state.bar()),
                    "declared": dump(state.declared),
                    "history": [dump(r) for r in state.history[-last:]],
                }
            )
        )
        return
    click.echo(f"session {state.session_id} · system {state.system}")
    click.echo(render_bar(state.bar()))
    click.echo(f"declared: {declared_line(dump(state.declared), describe(state.system))}")
    for record in state.history[-last:]:
        _print_record(record, as_json=False)


@session_group.command("setup", cls=SystemHelp)
@store_option
@click.argument("settings", nargs=-1, metavar="[NAME=VALUE]...")
def setup(store: Path, settings: tuple[str, ...]) -> None:
    """Set the active system's tracker up afresh: each setting as NAME=VALUE (the rest at
    their defaults); the settings are listed below."""
    with open_table(store, create=True) as table:
        description = describe(table.state.system)
        apply(table, "setup", **read_settings(description, settings))
        click.echo(render_bar(table.bar()))


LAST = "last"
"""`--reply-to last`: the latest roll of this system that awaits a reply."""


def _replying_to(table: Table, reply_to: str | None) -> str | None:
    """The roll id a reply names: as given, or the last opening roll's for `last`."""
    if reply_to != LAST:
        return reply_to
    opening = last_opening(table.state)
    if opening is None:
        raise click.ClickException(
            "no roll awaits a reply: the last opening roll is one declared to wait for one "
            "(e.g. --mode opposed), and a reply names it"
        )
    return opening.id


@session_group.command("declare", cls=SystemHelp)
@store_option
@click.option("--actor", default="", help="Who rolls.")
@click.option("--side", type=click.Choice(["a", "b"]), default=None, help="Their side.")
@click.option(
    "--reply-to",
    default=None,
    help="Id of the roll this one replies to; `last`: the last opening roll.",
)
@click.option("--reply", is_flag=True, help="Reply to the last opening roll (--reply-to last).")
@click.option("--mode", default="", help="The system's mode (listed below).")
@click.option("--pool", type=int, default=None, help="Dice in the pool.")
@click.argument("fields", nargs=-1, metavar="[NAME=VALUE]...")
def declare(
    store: Path, reply_to: str | None, reply: bool, fields: tuple[str, ...], **shared: Any
) -> None:
    """Declare the next roll: who, which side, which mode, reply to what, and the system's
    own fields as NAME=VALUE (listed below; a flag as NAME=true)."""
    if reply and reply_to not in (None, LAST):
        raise click.UsageError("give --reply (the last opening roll) or --reply-to ID, not both")
    with open_table(store) as table:
        description = describe(table.state.system)
        body = {**shared, **read_declared(description, fields)}
        replying = _replying_to(table, LAST if reply else body.pop("reply_to", reply_to))
        apply(table, "declare", **body, reply_to=replying)
        click.echo(f"declared: {declared_line(dump(table.state.declared), description)}")


def _recording(
    action: Callable[[Table], RollRecord], store: Path, as_json: bool, prefix: str = ""
) -> None:
    with open_table(store) as table:
        _print_record(action(table), as_json, prefix)
        if not as_json:
            click.echo(render_bar(table.bar()))


def _recorded(table: Table, dice: list[dict[str, Any]]) -> RollRecord:
    """Record `dice` through the desk; the record is the table's last roll."""
    apply(table, "roll", dice=dice)
    return table.state.history[-1]


def _undone(table: Table) -> RollRecord:
    """Take the last roll back through the desk, which refuses when there is none."""
    taken = table.state.history[-1:]
    apply(table, "undo")
    return taken[0]


@session_group.command("roll")
@store_option
@click.argument("dice", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Print the roll record as JSON.")
def roll(store: Path, dice: tuple[str, ...], as_json: bool) -> None:
    """Enter the dice of the declared roll by hand, e.g. `roll d8=5,3,1 d20=13`."""
    thrown = parse_dice(dice)
    _recording(lambda table: _recorded(table, thrown), store, as_json)


@session_group.command("undo")
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print the roll taken back as JSON.")
def undo(store: Path, as_json: bool) -> None:
    """Take back the last roll and its outcome."""
    _recording(_undone, store, as_json, prefix="took back ")


def _redone(table: Table) -> RollRecord:
    """Put the roll taken back last back through the desk, which refuses when it cannot."""
    apply(table, "redo")
    return table.state.history[-1]


@session_group.command("redo")
@store_option
@click.option("--json", "as_json", is_flag=True, help="Print the roll put back as JSON.")
def redo(store: Path, as_json: bool) -> None:
    """Put back the roll taken back last (while nothing else has changed since)."""
    _recording(_redone, store, as_json, prefix="put back ")


@session_group.command("system")
@store_option
@click.argument("name")
def system(store: Path, name: str) -> None:
    """Switch the table to another rule system (its tracker starts fresh)."""
    with open_table(store, create=True) as table:
        apply(table, "system", name=name)
        click.echo(f"now playing {name}")


@session_group.command("outbox")
@store_option
@click.option(
    "--retry", is_flag=True, help="Put the events set aside back, to be sent on the next start."
)
def outbox(store: Path, retry: bool) -> None:
    """List the events the tower could not publish and set aside; --retry (with the tower
    stopped, after a fix) puts them back in the outbox in their old places."""
    if not store.exists():
        raise click.ClickException(f"no session at {store}")
    try:
        if retry:
            with SessionStore(store, wait_s=WAIT_FOR_WRITER_S) as writer:
                moved = writer.unpark()
            click.echo(f"{moved} event(s) back in the outbox: the tower sends them next start")
            return
        with SessionStore(store, read_only=True) as reader:
            parked, waiting = reader.parked(), len(reader.pending(10_000))
    except StoreError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"{waiting} event(s) waiting to be sent; {len(parked)} set aside")
    for aside in parked:
        click.echo(f"  seq {aside.event.seq} ({aside.event.kind}): {aside.reason}")


@session_group.command("export")
@store_option
@click.option(
    "--format", "fmt", type=click.Choice(["csv", "json"]), default="csv", show_default=True
)
@click.option(
    "--since", type=click.DateTime(["%Y-%m-%d"]), default=None, help="From this day (UTC)."
)
def export(store: Path, fmt: str, since: Any) -> None:
    """Print every stored throw as CSV (a row a die) or JSON (an object a throw); read-only."""
    from tidetower.firmware.export import export_text  # here: `session` loads fast
    from tidetower.firmware.stats_cli import since_epoch

    click.echo(export_text(read_session(store), fmt, since_epoch(since)), nl=False)
