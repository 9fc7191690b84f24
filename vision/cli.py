"""`tidetower read`: read the dice in tray photos, as JSON lines or an annotated picture."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import cv2
import numpy as np

from tidetower.engine.tray import Reading
from tidetower.vision.annotate import annotate
from tidetower.vision.calibrate import CalibrationError, from_empty_tray, load_calibration
from tidetower.vision.kinds import face_text
from tidetower.vision.numerals.profile import ProfileError, load_profile
from tidetower.vision.progress import progress
from tidetower.vision.read import ImageError, load_image, read_dice, reader_problem, refusal
from tidetower.vision.settings import Calibration, ReaderSettings

PHOTO_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"})
"""What a folder given to `tidetower read` is taken to hold photos as."""


def photos_in(paths: tuple[str, ...]) -> list[str]:
    """Every path given, a folder standing for the photos in it (by name, not recursive)."""
    photos: list[str] = []
    for path in paths:
        folder = Path(path)
        if folder.is_dir():
            found = sorted(p for p in folder.iterdir() if p.suffix.lower() in PHOTO_SUFFIXES)
            photos += [str(p) for p in found]
        else:
            photos.append(path)
    return photos


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
@click.argument("images", nargs=-1, required=True, type=click.Path())  # photos or folders
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
@click.option(
    "--calibration",
    "calibration_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The tray's calibration (the folder `tidetower calibrate` wrote): only dice on the"
    " tray floor count.",
)
@click.option(
    "--empty-tray",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A photo of the empty tray, framed as IMAGE, to calibrate from instead.",
)
def read_command(
    images: tuple[str, ...],
    as_json: bool,
    annotate_to: Path | None,
    profile: Path | None,
    calibration_dir: Path | None,
    empty_tray: Path | None,
) -> None:
    """Read the dice in tray photos (IMAGE: a photo, or a folder of them), or close-ups of
    one die: every kind, its face, and the d100 a tens and a units d10 make together. With
    many photos and the lines going to a file or a pipe, a bar on the terminal shows how far."""
    photos = photos_in(images)
    if not photos:
        raise click.UsageError(f"no photos ({', '.join(sorted(PHOTO_SUFFIXES))}) in {images[0]}")
    if annotate_to is not None and len(photos) != 1:
        raise click.UsageError("--annotate takes exactly one IMAGE")
    settings = ReaderSettings(close_up=True, profile=str(profile) if profile else None)
    problem = reader_problem(settings)
    if problem is not None:
        raise click.ClickException(problem)
    if profile is not None:
        try:
            load_profile(profile)
        except ProfileError as error:
            raise click.ClickException(str(error)) from None
    calibration = _calibration(calibration_dir, empty_tray)
    failed = _read_all(photos, settings, calibration, as_json, annotate_to)
    for line in failed:  # after the bar, which would tear them
        click.echo(line, err=True)
    if failed:
        raise SystemExit(1)


def _calibration(folder: Path | None, empty_tray: Path | None) -> Calibration | None:
    """The calibration asked for, said on stderr (stdout keeps the lines), or None."""
    if folder is not None and empty_tray is not None:
        raise click.UsageError("give --calibration DIR or --empty-tray PHOTO, not both")
    try:
        if folder is not None:
            calibration, said = load_calibration(folder), f"calibration {folder}"
        elif empty_tray is not None:
            calibration, said = from_empty_tray(empty_tray), f"empty tray {empty_tray}"
        else:
            return None
    except CalibrationError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"reading with the {said}: {_tray_words(calibration)}", err=True)
    return calibration


def _tray_words(calibration: Calibration) -> str:
    """What a calibration keeps the reader to, in a person's words."""
    if calibration.tray is None:
        return "dice that differ from the empty tray"
    x0, y0, x1, y1 = (round(100 * v) for v in calibration.tray)
    return f"dice on the tray floor ({x0}-{x1} % across, {y0}-{y1} % down)"


def _photo(path: str, settings: ReaderSettings) -> np.ndarray:
    """Load a photo, refusing one too small to hold a die as clearly as one that is no image."""
    image = load_image(path)
    reason = refusal(image, settings.work_size)
    if reason is not None:
        raise ImageError(f"{path}: {reason}")
    return image


def _read_all(
    photos: list[str],
    settings: ReaderSettings,
    calibration: Calibration | None,
    as_json: bool,
    annotate_to: Path | None,
) -> list[str]:
    """Read each photo and print its line (a bar on stderr meanwhile, when `progress` says);
    return a line for each photo that could not be read."""
    failed = []
    with progress(photos, f"reading {len(photos)} photos", lines=sys.stdout) as bar:
        for path in bar:
            try:
                image = _photo(path, settings)
            except ImageError as err:
                failed.append(f"error: {err}")
                continue
            reading = read_dice(image, calibration, settings)
            click.echo(json.dumps(reading.to_json(path)) if as_json else _summary(path, reading))
            if annotate_to is not None:
                _write_annotation(annotate_to, image, reading)
    return failed
