"""`tidetower teach`: teach the reader a table's own dice, from labelled photos or at the tower.

From photos: `tidetower teach PROFILE --labels LABELS.json IMAGE ...`. At the tower:
`tidetower teach --config FILE --die d20 --name "white omen"` asks for throws until every
face has been seen and confirmed, keeps one photo per face beside the profile, and teaches
from them (`--sim` does the same with the simulated camera, whose player throws and answers).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import click
import cv2
import numpy as np

from tidetower.firmware.config import ConfigError, TowerConfig, load_config
from tidetower.firmware.tower import open_camera, sim_config
from tidetower.vision.calibrate import CalibrationError, load_calibration
from tidetower.vision.kinds import KINDS, face_text, face_values
from tidetower.vision.numerals.teach import TeachError, TeachReport, teach
from tidetower.vision.read import read_dice
from tidetower.vision.reading import Reading
from tidetower.vision.settings import Calibration
from tidetower.vision.settle import SettleWatch
from tidetower.vision.sources import FrameSource, FrameSourceError
from tidetower.vision.sources.simulated import SimulatedSource

SETTLED_FRAMES = 5
"""Still frames in a row that make a settled throw."""
MAX_FRAMES = 3000
"""Frames to wait for one throw before giving up (five minutes at 10 frames a second)."""

Answer = Callable[[Reading, set[int]], int | None]
"""Asks the person what the die shows, given the reading and the faces still wanted."""


def settled_throw(camera: FrameSource, watch: SettleWatch) -> np.ndarray:
    """Wait for the tray to change and then lie still with something in it; return that frame."""
    moved = False
    for _ in range(MAX_FRAMES):
        frame = camera.read(timeout=5.0)
        moved = watch.update(frame) or moved
        present = watch.anything_present(frame)
        if moved and watch.still_frames >= SETTLED_FRAMES and present is not False:
            return frame
    raise click.ClickException("no throw came to rest in the tray: is the camera on the tray?")


def collect(camera: FrameSource, kind: str, answer: Answer, watch: SettleWatch,
            before_throw: Callable[[], None] = lambda: None) -> dict[int, np.ndarray]:
    """Ask for throws until every face of `kind` has a confirmed photo; return them by face."""
    wanted = set(face_values(kind))
    photos: dict[int, np.ndarray] = {}
    while wanted:
        left = " ".join(face_text(kind, v) for v in sorted(wanted))
        click.echo(f"throw the {kind}: {len(wanted)} face(s) to go ({left})")
        before_throw()
        frame = settled_throw(camera, watch)
        value = answer(read_dice(frame), wanted)
        if value is None or value not in wanted:
            click.echo("  not kept: that face is taught already, or none was given")
            continue
        photos[value] = frame
        wanted.discard(value)
    return photos


def ask_person(kind: str) -> Answer:
    """Return an Answer that shows the reader's guess and asks the person at the terminal."""

    def answer(reading: Reading, wanted: set[int]) -> int | None:
        guess = next((d.value for d in reading.dice if d.die == kind), None)
        shown = face_text(kind, guess) if guess is not None else "?"
        text = click.prompt(f"  the camera reads {shown}: what does it show (enter: {shown})",
                            default=shown, show_default=False)
        try:
            return int(text)
        except ValueError:
            return None

    return answer


def sim_player(source: SimulatedSource, kind: str) -> tuple[Answer, Callable[[], None]]:
    """Return the simulated player's answers (the truth) and throws (one die of `kind`)."""

    def throw() -> None:
        if source.dice:
            source.reach_in()  # the last throw's die comes out first
        source.throw(dice=(kind,))

    def answer(reading: Reading, wanted: set[int]) -> int | None:
        truth = source.dice[0].value if source.dice else None
        click.echo(f"  the camera reads {[d.value for d in reading.dice]}; it shows {truth}")
        return truth

    return answer, throw


def teach_from_camera(config: TowerConfig, kind: str, name: str | None, profile: Path,
                      sim: bool) -> TeachReport:
    """Run the guided flow on the config's camera; teach the photos into the profile."""
    calibration = _calibration(config)
    with open_camera(config.camera, seed=0) as camera:
        if sim and isinstance(camera, SimulatedSource):
            answer, throw = sim_player(camera, kind)
            photos = collect(camera, kind, answer, SettleWatch(empty_tray=camera.empty), throw)
        else:
            watch = SettleWatch(empty_tray=calibration.background)
            photos = collect(camera, kind, ask_person(kind), watch)
    folder = profile / "photos"
    folder.mkdir(parents=True, exist_ok=True)
    labels, paths = {}, []
    for value, frame in sorted(photos.items()):
        paths.append(folder / f"{kind}_{value:02d}.png")
        cv2.imwrite(str(paths[-1]), frame)
        labels[paths[-1].name] = {"die": kind, "value": value}
    (folder / "labels.json").write_text(json.dumps(labels, indent=1), encoding="utf-8")
    return teach(profile, folder / "labels.json", paths, {kind: name} if name else {},
                 config.camera.reader)


def _calibration(config: TowerConfig) -> Calibration:
    """Return the camera's calibration, or none (the simulated camera needs none)."""
    folder = config.camera.calibration
    if folder is None or not folder.exists():
        return Calibration()
    try:
        return load_calibration(folder)
    except CalibrationError as error:
        raise click.ClickException(str(error)) from None


def _guided_config(config_path: Path | None) -> TowerConfig:
    if config_path is None:
        return sim_config(Path(tempfile.mkdtemp(prefix="tidetower-teach-")) / "s.db")
    try:
        return load_config(config_path)
    except ConfigError as error:
        raise click.ClickException(str(error)) from None


def _say(report: TeachReport, profile: Path) -> None:
    views = sum(report.added.values())
    click.echo(f"taught {len(report.added)} faces ({views} views) into {profile}; "
               f"check trays read right: {100 * report.before:.1f} % before, "
               f"{100 * report.after:.1f} % with it")


@click.command("teach")
@click.argument("profile", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.argument("images", nargs=-1, type=click.Path(path_type=Path))
@click.option("--labels", "labels_path", type=click.Path(dir_okay=False, path_type=Path),
              help='JSON from photo file name to {"die": "d20", "value": 17} (one die) or '
                   '{"dice": [{"die", "value", "box"}, ...]} (a tray; boxes x0,y0,x1,y1 0..1).')
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False,
              path_type=Path), help="Teach at the tower, with its camera: throw and confirm.")
@click.option("--sim", is_flag=True, help="Teach at the simulated tower (a player throws).")
@click.option("--die", "kind", type=click.Choice(KINDS), help="The kind to teach at the tower.")
@click.option("--name", help='What the table calls the die taught at the tower ("white omen").')
def teach_command(profile: Path | None, images: tuple[Path, ...], labels_path: Path | None,
                  config_path: Path | None, sim: bool, kind: str | None,
                  name: str | None) -> None:
    """Teach the reader the table's own dice into the PROFILE folder (made, or extended).

    From photos: PROFILE --labels LABELS.json IMAGE ... At the tower: --config FILE --die
    KIND [--name NAME] [PROFILE] (PROFILE defaults to the config's [camera.reader] profile,
    else a `dice` folder beside the calibration). Read with it by `tidetower read --profile
    PROFILE` or the config's [camera.reader] profile. A profile that would read other dice
    worse is refused, and nothing is written."""
    try:
        if config_path is None and not sim:
            if profile is None or labels_path is None or not images:
                raise click.UsageError("give PROFILE --labels LABELS.json IMAGE ..., "
                                       "or --config FILE --die KIND to teach at the tower")
            _say(teach(profile, labels_path, images, {}), profile)
            return
        if kind is None:
            raise click.UsageError("--die KIND: which die is taught at the tower")
        config = _guided_config(config_path)
        target = profile or _default_profile(config)
        _say(teach_from_camera(config, kind, name, target, sim), target)
    except TeachError as error:
        raise click.ClickException(str(error)) from None
    except FrameSourceError as error:
        raise click.ClickException(f"camera: {error}") from None


def _default_profile(config: TowerConfig) -> Path:
    """Return where the tower keeps its taught dice: the config's profile, or beside the
    calibration."""
    if config.camera.reader.profile:
        return Path(config.camera.reader.profile)
    if config.camera.calibration is not None:
        return config.camera.calibration / "dice"
    raise click.UsageError("say where to keep the profile: PROFILE, or camera.calibration")

