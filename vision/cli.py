"""`tidetower read`: read the dice in tray photos, as JSON lines or an annotated picture."""

from __future__ import annotations

import json
from pathlib import Path

import click
import cv2
import numpy as np

from tidetower.vision.annotate import annotate
from tidetower.vision.read import ImageError, load_image, read_dice
from tidetower.vision.reading import Reading


def _summary(path: str, reading: Reading) -> str:
    """Return one human line for a photo: the values read and how many are unreadable."""
    values = " ".join(str(v) for v in reading.values) or "no dice"
    extra = f", {len(reading.unreadable)} unreadable" if reading.unreadable else ""
    return f"{path}: {values}{extra} ({reading.ms:.1f} ms)"


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
def read_command(images: tuple[str, ...], as_json: bool, annotate_to: Path | None) -> None:
    """Read the dice in tray photos (d6 for now)."""
    if annotate_to is not None and len(images) != 1:
        raise click.UsageError("--annotate takes exactly one IMAGE")
    failed = 0
    for path in images:
        try:
            image = load_image(path)
        except ImageError as err:
            failed += 1
            click.echo(f"error: {err}", err=True)
            continue
        reading = read_dice(image)
        click.echo(json.dumps(reading.to_json(path)) if as_json else _summary(path, reading))
        if annotate_to is not None:
            _write_annotation(annotate_to, image, reading)
    if failed:
        raise SystemExit(1)
