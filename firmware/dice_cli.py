"""`tidetower dice`: the table's own dice, kept beside the session's store.

`list` shows each die with its kind, marks, colour and photos a face; `rename` and
`forget` change one; `teach` adds photos whose faces are known. Teaching by throwing is
`tidetower teach --die KIND --name NAME` at the tower (or `--sim`).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from tidetower.firmware.assign import store_option
from tidetower.vision.dice.table import (
    DiceFileError,
    TableDie,
    forget_die,
    load_dice,
    rename_die,
)
from tidetower.vision.kinds import face_text, face_values

ENOUGH = 3
"""Photos a face needs before its die is read as well as it will be (docs/vision.md)."""


def dice_folder(store: Path) -> Path:
    """Return the table's dice folder beside a session store: `<store's stem>-dice`."""
    return store.with_name(f"{store.stem}-dice")


def summary(die: TableDie) -> dict[str, object]:
    """Return what `dice list --json` says of a die."""
    taught = die.taught()
    return {
        "name": die.name,
        "kind": die.kind,
        "marks": die.meta.marks,
        "colour": [round(c) for c in die.meta.colour],
        "photos": len(die.faces),
        "faces": {face_text(die.kind, f): taught.get(f, 0) for f in face_values(die.kind)},
    }


def short_faces(kind: str, taught: dict[int, int]) -> list[str]:
    """Return the faces of a die with fewer than ENOUGH photos, as the die shows them."""
    return [face_text(kind, f) for f in face_values(kind) if taught.get(f, 0) < ENOUGH]


def line_of(die: TableDie) -> str:
    """Return a die in one line: name, kind, marks and the faces still short of photos."""
    short = short_faces(die.kind, die.taught())
    state = "ready" if not short else f"{len(short)} face(s) under {ENOUGH} photos"
    return f"{die.name}: {die.kind}, {die.meta.marks}, {len(die.faces)} photos, {state}"


@click.group("dice")
def dice_group() -> None:
    """The table's own dice: each taught by throwing it and read by a reader of its own."""


@dice_group.command("list")
@store_option
@click.option("--json", "as_json", is_flag=True, help="One JSON list of the dice.")
def list_command(store: Path, as_json: bool) -> None:
    """List the table's dice."""
    dice = _loaded(dice_folder(store))
    if as_json:
        click.echo(json.dumps([summary(d) for d in dice]))
        return
    if not dice:
        click.echo("no dice taught yet: tidetower teach --die KIND --name NAME (or --sim)")
    for die in dice:
        click.echo(line_of(die))


@dice_group.command("rename")
@store_option
@click.argument("old")
@click.argument("new")
def rename_command(store: Path, old: str, new: str) -> None:
    """Give one of the table's dice a new name (the statistics use it from then on)."""
    try:
        rename_die(dice_folder(store), old, new)
    except DiceFileError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"{old} is now {new}")


@dice_group.command("forget")
@store_option
@click.argument("name")
def forget_command(store: Path, name: str) -> None:
    """Forget one of the table's dice and its photos: it is read as a die not met."""
    try:
        forget_die(dice_folder(store), name)
    except DiceFileError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"forgot {name}")


def _loaded(folder: Path) -> tuple[TableDie, ...]:
    """The dice in a folder, or a one-line error naming the file that is not a die's."""
    try:
        return load_dice(folder)
    except DiceFileError as error:
        raise click.ClickException(str(error)) from None
