"""`tidetower read`: read the dice in tray photos, as JSON lines or an annotated picture."""

from __future__ import annotations

import json
from pathlib import Path

import click
import cv2
import numpy as np

from tidetower.engine.tray import Reading
from tidetower.vision.annotate import annotate
from tidetower.vision.kinds import face_text
from tidetower.vision.numerals.profile import ProfileError, load_profile
from tidetower.vision.read import ImageError, load_image, read_dice
from tidetower.vision.settings import ReaderSettings


def _summary(path: str, reading: Reading) -> str:
    """Return one human line for a photo: each die as kind=value, and how many are
    unreadable; a tens and a units d10 read together also as their d100."""
    values = " ".join(f"{d.die}={face_text(d.die, d.value)}" for d in reading.dice) or "no dice"
    combined = "".join(f" (d100={c.value})" for c in reading.combined)
    extra = f", {len(reading.unreadable)} unreadable" if reading.unreadable else ""
    return f"{path}: {values}{combined}{extra} ({reading.ms:.1f} ms)"


def _write_annotation(path: Path, image: np.ndarray, reading: Reading) -> None:
    """Write the annotated photo, or fail clearly if it cannot be written."""
    try:
        ok = cv2.imwrite(str(path), annotate(image, reading))
    except cv2.error:
        ok = False
    if not ok:
        raise click.ClickException(f"cannot write {path} (use a .png or .jpg name)")


@click.command("read")
@click.argument("images", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per image.")
@click.option(
    "--annotate",
    "annotate_to",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write IMAGE with each die boxed and labelled to this file (one image only).",
)
@click.option(
    "--profile",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Read with the table's taught dice (a folder `tidetower teach` wrote).",
)
def read_command(
    images: tuple[str, ...], as_json: bool, annotate_to: Path | None, profile: Path | None
) -> None:
    """Read the dice in tray photos, or close-ups of one die: every kind, its face, and
    the d100 a tens and a units d10 make together."""
    if annotate_to is not None and len(images) != 1:
        raise click.UsageError("--annotate takes exactly one IMAGE")
    settings = ReaderSettings(close_up=True, profile=str(profile) if profile else None)
    if profile is not None:
        try:
            load_profile(profile)
        except ProfileError as error:
            raise click.ClickException(str(error)) from None
    failed = 0
    for path in images:
        try:
            image = load_image(path)
        except ImageError as err:
            failed += 1
            click.echo(f"error: {err}", err=True)
            continue
        reading = read_dice(image, settings=settings)
        click.echo(json.dumps(reading.to_json(path)) if as_json else _summary(path, reading))
        if annotate_to is not None:
            _write_annotation(annotate_to, image, reading)
    if failed:
        raise SystemExit(1)
