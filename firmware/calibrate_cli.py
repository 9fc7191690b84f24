"""`tidetower calibrate`: photograph the empty tray, find it, store it, show what was found."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import cv2

from tidetower.enclosure.geometry import die_size_check, layout
from tidetower.enclosure.params import EnclosureParams
from tidetower.firmware.config import ConfigError, TowerConfig, load_config
from tidetower.firmware.tower import open_camera
from tidetower.vision.calibrate import (
    annotate_tray,
    capture_background,
    find_tray,
    save_calibration,
)
from tidetower.vision.sources import FrameSource, FrameSourceError


def _camera_config(config_path: Path | None, sim: bool) -> TowerConfig:
    if config_path is None and not sim:
        raise click.UsageError("give --config PATH, or --sim to calibrate the simulated camera")
    if config_path is None:
        from tidetower.firmware.sim import sim_config

        return sim_config(Path("session.db"))  # never opened: calibrating uses the camera only
    try:
        return load_config(config_path)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None


def _exposure(camera: FrameSource) -> dict[str, Any]:
    """Exposure settings to lock on the next start, when the camera can report them."""
    exposure = getattr(camera, "exposure", None)  # the Pi camera's (vision/sources/pi_camera.py)
    return {} if exposure is None else dict(exposure())


@click.command("calibrate")
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The tower's TOML config (camera and calibration folder).",
)
@click.option("--sim", is_flag=True, help="Calibrate the simulated camera.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Calibration folder (default: camera.calibration from the config).",
)
@click.option("--frames", default=9, show_default=True, help="Frames to take the median of.")
def calibrate_command(config_path: Path | None, sim: bool, out: Path | None, frames: int) -> None:
    """Capture the empty tray, find the tray region, store both with the exposure used."""
    config = _camera_config(config_path, sim)
    folder = out or config.camera.calibration
    if folder is None:
        raise click.UsageError("say where to store it: --out DIR or camera.calibration")
    try:
        with open_camera(config.camera, seed=0) as camera:
            background = capture_background(camera, frames)
            exposure = _exposure(camera)
    except FrameSourceError as error:
        raise click.ClickException(f"camera: {error}") from None
    tray = find_tray(background)
    save_calibration(folder, background, tray, exposure)
    preview = folder / "calibration.png"
    cv2.imwrite(str(preview), annotate_tray(background, tray))
    click.echo(f"tray region {tuple(round(v, 3) for v in tray)} stored in {folder}")
    if config.enclosure is not None:
        click.echo(
            die_size_line(config.enclosure, tray, (background.shape[1], background.shape[0]))
        )
    click.echo(f"check what was found: {preview}")


def die_size_line(
    params: EnclosureParams, tray: tuple[float, float, float, float], frame: tuple[int, int]
) -> str:
    """The die size the tray shows against the one [enclosure] promises; a warning when they
    differ by more than its tolerance (a camera at another height, or another tray)."""
    check = die_size_check(params, tray, frame)
    said = (
        f"a {params.min_die:g} mm die spans {check.measured:.0f} px on this tray, "
        f"{check.expected:.0f} px expected from [enclosure]"
    )
    if check.agrees:
        return f"{said}: agrees"
    lens = layout(params).lens_height
    return (
        f"warning: {said}, off by {check.off_by:+.0%} (more than {check.tolerance:.0%}): is the "
        f"lens {lens:.0f} mm above the tray floor, is the tray {params.tray_width:g} x "
        f"{params.tray_depth:g} mm, and is the region found the tray floor?"
    )
