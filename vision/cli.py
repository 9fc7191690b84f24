"""`tidetower read`: read the dice in tray photos, as JSON lines or an annotated picture."""

from __future__ import annotations

import json
from pathlib import Path

import click
import cv2
import numpy as np

from tidetower.vision.annotate import annotate
from tidetower.vision.kinds import face_text
from tidetower.vision.numerals.profile import ProfileError, load_profile
from tidetower.vision.numerals.teach import TeachError, teach
from tidetower.vision.read import ImageError, load_image, read_dice
from tidetower.vision.reading import Reading
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
@click.option("--annotate", "annotate_to", type=click.Path(dir_okay=False, path_type=Path),
              help="Write IMAGE with each die boxed and labelled to this file (one image only).")
@click.option("--profile", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Read with the table's taught dice (a folder `tidetower teach` wrote).")
def read_command(images: tuple[str, ...], as_json: bool, annotate_to: Path | None,
                 profile: Path | None) -> None:
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


@click.command("teach")
@click.argument("profile", type=click.Path(file_okay=False, path_type=Path))
@click.argument("images", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--labels", "labels_path", required=True,
              type=click.Path(dir_okay=False, path_type=Path),
              help='JSON from photo file name to {"die": "d20", "value": 17} (one die) or '
                   '{"dice": [{"die", "value", "box"}, ...]} (a tray; boxes x0,y0,x1,y1 0..1).')
@click.option("--name", "names", multiple=True, metavar="KIND=NAME",
              help='What the table calls a die, e.g. --name "d20=white omen" (repeatable).')
def teach_command(profile: Path, images: tuple[Path, ...], labels_path: Path,
                  names: tuple[str, ...]) -> None:
    """Teach the reader the table's own dice from labelled photos, into the PROFILE folder
    (made, or extended); read with it by `tidetower read --profile PROFILE` or the config's
    [camera.reader] profile. A profile that would read other dice worse is refused."""
    named = dict(n.split("=", 1) for n in names if "=" in n)
    try:
        report = teach(profile, labels_path, images, named)
    except TeachError as error:
        raise click.ClickException(str(error)) from None
    views = sum(report.added.values())
    click.echo(f"taught {len(report.added)} faces ({views} views) into {profile}; "
               f"check trays read right: {100 * report.before:.1f} % before, "
               f"{100 * report.after:.1f} % with it")
