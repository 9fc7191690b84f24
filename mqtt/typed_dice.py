"""Dice as a GM types them on a command line, `KIND=FACE[,FACE...]`: the same for
`tidetower session roll` and `tidetower gm roll`."""

from __future__ import annotations

from typing import Any

import click

from tidetower.engine.dice import DieError, DieKind

KIND_NAMES = frozenset(kind.value for kind in DieKind)
"""The words that start a typed die (`d6=5,2`), rather than another KEY=VALUE field."""


def parse_dice(tokens: tuple[str, ...]) -> list[dict[str, Any]]:
    """Dice typed as KIND=FACE[,FACE...], e.g. d6=5,2,1 d20=13, as a roll command's dice."""
    dice: list[dict[str, Any]] = []
    for token in tokens:
        kind_text, sep, faces = token.partition("=")
        if not sep or not faces:
            raise click.BadParameter(f"{token!r}: write dice as KIND=FACE, e.g. d6=5 or d6=5,2")
        try:
            kind = DieKind.parse(kind_text)
        except DieError as error:
            raise click.BadParameter(str(error)) from None
        for face in faces.split(","):
            if not (face.strip().isascii() and face.strip().isdigit()):
                raise click.BadParameter(f"{token!r}: {face!r} is not a face number")
            dice.append({"kind": kind.value, "value": int(face)})
    return dice


def is_typed_die(field: str) -> bool:
    """True for a field that names a die kind (`d6=5,2`), not a command's KEY=VALUE."""
    return field.partition("=")[0].strip().lower() in KIND_NAMES
