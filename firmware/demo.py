"""`tidetower demo`: the Tide rules' worked example, "Emperor's column", played out with
simulated dice."""

from __future__ import annotations

from dataclasses import dataclass

import click

from tidetower.engine import params as p
from tidetower.engine.dice import DieKind, Roll
from tidetower.engine.rules import JSONValue, RollContext, RollRecord, Side
from tidetower.engine.session import SessionState, new_session, record_roll
from tidetower.engine.simdice import SimulatedDice
from tidetower.engine.systems.tide.system import marks_text
from tidetower.mqtt.ledbar.terminal import render_bar

COLUMN: dict[str, JSONValue] = {
    "weight_a": 6,
    "weight_b": 12,
    "size": "battle",
    "footing": "severe-a",
    "label_a": "Imperial",
    "label_b": "Mongol",
}
SCENE_FACES = {
    4: "ambush in the left dry wash (scene only)",
    13: "Negative Consequence",
    1: "the ring closes: surrender (also Tide-negative)",
}
MAX_EXCHANGES = 60


@dataclass(frozen=True)
class Throw:
    """One actor's throw in a beat: who, for which side, and the pool."""

    actor: str
    side: Side
    dice: int
    tier: DieKind
    omen: bool = False


@dataclass(frozen=True)
class Beat:
    """One step of the story: narration, an opening throw and the reply to it."""

    title: str
    narration: str
    opening: Throw
    reply: Throw
    tide_linked: bool


ZHAO = Throw("Zhao", "a", 4, DieKind.D6, omen=True)
WEI = Throw("Wei", "a", 4, DieKind.D6, omen=True)
ARCHERS = Throw("Mongol horse-archers", "b", 4, DieKind.D12)

STORY = (
    Beat(
        "Zhao's first order",
        "Zhao orders the outriders to stop the chase: the pursuit "
        "would open the line. Tide-linked.",
        ZHAO,
        ARCHERS,
        True,
    ),
    Beat(
        "Wei at the litter",
        "Wei shields the Emperor's litter from a volley. Saving the "
        "Emperor is a personal objective: the bar does not care.",
        Throw("Wei", "a", 4, DieKind.D6),
        Throw("an archer", "b", 3, DieKind.D12),
        False,
    ),
    Beat(
        "Zhao holds the wash",
        "Zhao is forced back a horse-length at the wash. A local fight: personal.",
        Throw("Zhao", "a", 3, DieKind.D6),
        Throw("a lancer", "b", 3, DieKind.D12),
        False,
    ),
)
HARASSMENT = (
    Beat(
        "The harassment goes on",
        "The horse-archers stay out of reach and shoot. Zhao "
        "leads a sally to drive them off. Tide-linked.",
        ZHAO,
        ARCHERS,
        True,
    ),
    Beat(
        "The harassment goes on",
        "Wei rallies the guard around the litter to hold the column together. Tide-linked.",
        WEI,
        ARCHERS,
        True,
    ),
)

LAST_CUT = Beat(
    "Zhao's last cut",
    "Zhao, boxed in at the wash and surrounded, cuts at the "
    "ring. Strength + Slash. Tide-linked: one throw can move the bar twice.",
    Throw("Zhao", "a", 3, DieKind.D6, omen=True),
    Throw("the ring of riders", "b", 5, DieKind.D12),
    True,
)


def _throw(dice: SimulatedDice, throw: Throw) -> Roll:
    groups = [(throw.dice, throw.tier)] + ([(1, DieKind.D20)] if throw.omen else [])
    return dice.throw(*groups, roller=throw.actor)


def _show_throw(record: RollRecord) -> None:
    pool = [d for d in record.roll.dice if d.kind is not DieKind.D20]
    faces = " ".join(str(d.face) for d in pool)
    omen = record.outcome.facts.get("omen")
    omen_text = f" + Omen d20 [{omen}]" if omen is not None else ""
    click.echo(
        f"  {record.roll.roller} rolls {len(pool)}{pool[0].kind.value} [{faces}]"
        f"{omen_text} → {marks_text(p.whole(record.outcome.facts, 'marks'))}"
    )
    if isinstance(omen, int) and omen in SCENE_FACES:
        click.echo(f"    scene face {omen}: {SCENE_FACES[omen]}")


def play_beat(state: SessionState, beat: Beat, dice: SimulatedDice) -> SessionState:
    """Throw a beat's opening and reply, print the outcome and every motion of the bar."""
    click.echo(click.style(f"\n{beat.title}", bold=True) + f"\n  {beat.narration}")
    first = beat.opening
    context = RollContext(
        actor=first.actor,
        side=first.side,
        tide_linked=beat.tide_linked,
        mode="opposed",
        pool=first.dice,
        tier=first.tier,
    )
    state, opening = record_roll(state, _throw(dice, first), context)
    _show_throw(opening)
    second = beat.reply
    context = RollContext(
        actor=second.actor,
        side=second.side,
        reply_to=opening.id,
        pool=second.dice,
        tier=second.tier,
    )
    state, reply = record_roll(state, _throw(dice, second), context)
    _show_throw(reply)
    click.echo(f"  {reply.outcome.summary.split(';')[0]}")
    for motion in reply.outcome.motions:
        click.echo(f"  the bar moves {motion.before} → {motion.after}: {motion.cause}")
    if not reply.outcome.motions:
        click.echo(f"  the bar stays at {state.tracker.track.marker}")
    click.echo(render_bar(state.bar()))
    return state


def play(seed: int | None, wait: bool) -> SessionState:
    """The whole story, beat by beat, until one side routs."""
    dice = SimulatedDice(seed)
    state = new_session("demo", "tide", COLUMN)
    click.echo(click.style("Tide demo: the Emperor's column", bold=True))
    click.echo(
        "Noon on the steppe road. Zhao's outriders report horse-archers who stay out "
        "of reach and shoot.\nSetup: Imperial 6 v Mongol 12, track 17, start 6, "
        "Battle (3 Marks per step), severe footing against the column."
    )
    omens = state.tracker.track.omen_faces()
    click.echo(f"Tide Omens against the column: {omens['a']}; for the column: {omens['b']}")
    click.echo(render_bar(state.bar()))
    beats = list(STORY) + [HARASSMENT[i % 2] for i in range(MAX_EXCHANGES)]
    for beat in beats:
        if state.tracker.track.routed is not None:
            break
        if state.tracker.track.marker <= 2 and beat in HARASSMENT:
            beat = LAST_CUT
        if wait:
            click.pause("\n(press any key for the next beat)")
        state = play_beat(state, beat, dice)
    _epilogue(state)
    return state


def _epilogue(state: SessionState) -> None:
    routed = state.tracker.track.routed
    if routed == "a":
        click.echo(
            "\nThe column breaks and flees. The Tide broke the column's will, not "
            "Wei's: the Emperor can still be saved, a personal objective."
        )
    elif routed == "b":
        click.echo("\nAgainst all odds the horse-archers break off and scatter.")
    else:
        click.echo("\nDusk falls on the steppe road with neither side broken.")


@click.command("demo")
@click.option("--no-wait", is_flag=True, help="Run without pausing between beats.")
@click.option("--seed", type=int, default=None, help="Seed for the simulated dice.")
def demo_command(no_wait: bool, seed: int | None) -> None:
    """Play the Tide rules' worked example, 'Emperor's column', with simulated dice, drawing
    the Tide bar."""
    play(seed, wait=not no_wait)
