"""What the tower says at the terminal as it plays: each roll and the bar after it, the GM's
actions, the tower's state, and trouble said once until it changes."""

from __future__ import annotations

import json
from typing import Any

import click

from tidetower.engine.codec import dump
from tidetower.engine.rules import RollRecord
from tidetower.engine.store import OutboxEvent
from tidetower.engine.tray import Reading, TowerState
from tidetower.firmware.tower import Tower
from tidetower.mqtt.ledbar.terminal import render_bar

STATE_LINES = {
    TowerState.ROLLING: "\n· dice dropping",
    TowerState.READING: "· settled: reading the tray",
    TowerState.IDLE: "· tray clear: ready for the next throw",
}


def roll_line(record: RollRecord, reading: Reading, tower: Tower) -> dict[str, Any]:
    """One roll as a JSON-ready line: dice read, outcome, and the bar after it."""
    line: dict[str, Any] = {
        "roll": record.id,
        "seq": record.seq,
        "system": record.system,
        "dice": [d.to_dict() for d in reading.dice],
        "outcome": dump(record.outcome),
        "tide": dump(tower.table.bar()),  # the key the product has always printed
    }
    if reading.combined:
        line["combined"] = [c.to_dict() for c in reading.combined]
    return line


def print_roll(record: RollRecord, reading: Reading, tower: Tower, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(roll_line(record, reading, tower)))
        return
    faces = " ".join(f"{d.die}={d.value}{' (typed)' if d.typed else ''}" for d in reading.dice)
    faces += "".join(f" (d100={c.value})" for c in reading.combined)
    click.echo(f"\n{record.id}  {faces}\n  {record.outcome.summary}")
    click.echo(render_bar(tower.table.bar()))


def print_action(event: OutboxEvent, tower: Tower, as_json: bool) -> None:
    """A GM's action (an undo, a redo, a new tracker, another system) and the bar after it;
    not with --json, whose lines are the rolls."""
    action = event.body.get("action") if isinstance(event.body, dict) else None
    if isinstance(action, dict) and not as_json:
        click.echo(f"\n  GM: {action.get('text')}\n{render_bar(tower.table.bar())}")


def say_trouble(line: str, said: list[str]) -> None:
    """Say on stderr what keeps the tower from keeping rolls, once until it changes (a full
    disk refuses every throw alike)."""
    if said[-1:] != [line]:
        click.echo(line, err=True)
    said[:] = [line]


def print_state(
    state: TowerState, tower: Tower, as_json: bool, shown: list[str], said: list[str]
) -> None:
    attention = tower.loop.attention
    if state is TowerState.NEEDS_ATTENTION and attention and attention.kind == "unsaved":
        say_trouble(f"needs attention: {attention.reason}", said)
        return
    if as_json:
        return
    if state in STATE_LINES:
        if shown[-1:] != [STATE_LINES[state]]:  # a bounce back to rolling is the same throw
            click.echo(STATE_LINES[state])
        shown[:] = [STATE_LINES[state]]
    elif state is TowerState.NEEDS_ATTENTION and tower.loop.attention is not None:
        click.echo(f"  needs attention: {tower.loop.attention.reason}")
    elif state is TowerState.ERROR:
        click.echo(f"  error: {tower.loop.error}")
