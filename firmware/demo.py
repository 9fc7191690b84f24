"""`tidetower demo`: a rule system's practice table played out with simulated dice, each
throw's outcome and the tracker drawn after it, until a side routs or the turns run out."""

from __future__ import annotations

import random
import textwrap

import click

from tidetower.engine.codec import dump
from tidetower.engine.dice import DieKind
from tidetower.engine.rules import JSONValue, PracticeTurn, RuleError
from tidetower.engine.session import SessionState, declare, new_session, record_roll, reset_tracker
from tidetower.engine.simdice import SimulatedDice
from tidetower.engine.systems import DEFAULT_SYSTEM, get_system, system_names
from tidetower.firmware.assign import describe, read_settings
from tidetower.mqtt.ledbar.terminal import render_bar
from tidetower.mqtt.wording import declared_line

HANDFUL = 3
"""The d6 a player throws when the practice names no dice."""


def play_turn(state: SessionState, turn: PracticeTurn, dice: SimulatedDice) -> SessionState:
    """One turn: set up afresh if the system says so, declare, throw, draw."""
    if turn.reset is not None:
        state = reset_tracker(state, turn.reset)
    if turn.context is not None:
        state = declare(state, turn.context)
    said = declared_line(dump(state.declared), get_system(state.system).describe())
    click.echo(f"  {said}")
    thrown = dice.throw(*[(1, kind) for kind in turn.dice] or [(HANDFUL, DieKind.D6)])
    state, record = record_roll(state, thrown)
    faces = " ".join(str(d) for d in record.roll.dice)
    click.echo(f"  {faces} → {record.outcome.summary}")
    for motion in record.outcome.motions:
        click.echo(f"  the bar moves {motion.before} → {motion.after}: {motion.cause}")
    click.echo(render_bar(state.bar()))
    return state


def play(
    system: str, settings: tuple[str, ...], seed: int | None, turns: int, wait: bool, told: bool
) -> SessionState:
    """`system`'s worked example (`told`, where it has one), else practice turns from its
    tracker set up with `settings`, until a rout or the turns run out."""
    description = describe(system)
    story = told and description.story is not None
    state = new_session("demo", system, read_settings(description, settings))
    rng, dice = random.Random(seed), SimulatedDice(seed)
    options: dict[str, JSONValue] = {"story": True} if story else {}
    click.echo(
        click.style(
            f"{description.title}: {description.story if story else 'a practice table'}", bold=True
        )
    )
    for number in range(1, turns + 1):
        turn = get_system(system).practice_turn(state.tracker, state.history, rng, options)
        if turn.done or (not story and state.bar().routed is not None):
            click.echo(f"\n{turn.narration}" if turn.narration else "")
            break
        if wait:
            click.pause("\n(press any key for the next turn)")
        click.echo(click.style(f"\nturn {number}", bold=True))
        if turn.narration:
            click.echo(textwrap.indent(turn.narration, "  "))
        state = play_turn(state, turn, dice)
    return state


@click.command("demo")
@click.option(
    "--system",
    type=click.Choice(system_names()),
    default=DEFAULT_SYSTEM,
    show_default=True,
    help="The rule system played.",
)
@click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="NAME=VALUE",
    help="A setting of the tracker, as `session setup` takes it (repeatable).",
)
@click.option(
    "--turns", type=click.IntRange(1, 1000), default=120, show_default=True, help="Throws at most."
)
@click.option(
    "--practice",
    is_flag=True,
    help="Practice turns even where the system tells a worked example.",
)
@click.option("--no-wait", is_flag=True, help="Run without pausing between turns.")
@click.option("--seed", type=int, default=None, help="Seed for the simulated dice.")
def demo_command(
    system: str,
    settings: tuple[str, ...],
    turns: int,
    practice: bool,
    no_wait: bool,
    seed: int | None,
) -> None:
    """Play a rule system's worked example or its practice
    table with simulated dice, drawing its tracker."""
    try:
        play(system, settings, seed, turns, wait=not no_wait, told=not practice)
    except RuleError as error:
        raise click.ClickException(str(error)) from None
