"""`tidetower teach`: teach the reader a table's own dice, from labelled photos or at the tower.

From photos: `tidetower teach PROFILE --labels LABELS.json IMAGE ...`. At the tower:
`tidetower teach --config FILE --die d20 --name "white omen"` asks for throws until every
face has been seen and confirmed `--photos` times (3), keeps the photos beside the profile,
and teaches from them (`--sim` does the same with the simulated camera, whose player throws
and answers).
"""

from __future__ import annotations

import contextlib
import json
import queue
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import click
import cv2
import numpy as np

from tidetower.engine.tray import Reading
from tidetower.firmware.config import ConfigError, TowerConfig, load_config
from tidetower.firmware.corrections import Corrections
from tidetower.firmware.dice_cli import dice_folder
from tidetower.firmware.learn import learn_from_corrections, profile_home
from tidetower.firmware.profiles import rollback
from tidetower.firmware.sim import sim_config
from tidetower.firmware.tower import open_camera
from tidetower.mqtt.broker import BrokerStartError
from tidetower.mqtt.payloads import TeachPayload, TeachStep
from tidetower.mqtt.teaching import TeachLink
from tidetower.vision.calibrate import CalibrationError, load_calibration
from tidetower.vision.kinds import KINDS, face_text, face_values
from tidetower.vision.numerals.profile import ProfileError
from tidetower.vision.numerals.teach import TeachError, TeachReport, teach
from tidetower.vision.progress import progress
from tidetower.vision.read import read_dice
from tidetower.vision.settings import Calibration, ReaderSettings
from tidetower.vision.settle import SettleWatch
from tidetower.vision.sources import FrameSource, FrameSourceError
from tidetower.vision.sources.simulated import SimulatedSource

SETTLED_FRAMES = 5
"""Still frames in a row that make a settled throw."""
MAX_FRAMES = 3000
"""Frames to wait for one throw before giving up (five minutes at 10 frames a second)."""

PHOTOS_A_FACE = 3
"""Confirmed photos a face is taught from at the tower: 3 gave most of what 10 give
(docs/BENCHMARKS.md, "The table's dice"), in about as many throws as a d20 has faces x 5."""

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


class Progress:
    """Tells the display pages (through a TeachLink, if there is one) how the flow goes."""

    def __init__(
        self, kind: str, name: str | None, link: TeachLink | None = None, answerable: bool = True
    ) -> None:
        self.kind, self.name, self.link, self.answerable = kind, name, link, answerable

    def show(
        self, step: TeachStep, wanted: set[int], guess: int | None = None, message: str = ""
    ) -> None:
        """Publish the step, the faces taught so far and the camera's guess."""
        if self.link is None:
            return
        faces = list(face_values(self.kind))
        self.link.show(
            TeachPayload.model_validate(
                {
                    "die": self.kind,
                    "name": self.name,
                    "faces": faces,
                    "step": step,
                    "taught": [f for f in faces if f not in wanted],
                    "guess": guess,
                    "message": message,
                }
            ),
            self.answerable,
        )


def guess_of(reading: Reading, kind: str) -> int | None:
    """Return the face the camera reads on a die of `kind`, if it read one."""
    return next((d.value for d in reading.dice if d.die == kind), None)


def collect(
    camera: FrameSource,
    kind: str,
    answer: Answer,
    watch: SettleWatch,
    before_throw: Callable[[], None] = lambda: None,
    progress: Progress | None = None,
    per_face: int = 1,
) -> dict[int, list[np.ndarray]]:
    """Ask for throws until every face of `kind` has `per_face` confirmed photos; return them
    by face."""
    photos: dict[int, list[np.ndarray]] = {face: [] for face in face_values(kind)}
    progress = progress or Progress(kind, None)
    while wanted := {face for face, kept in photos.items() if len(kept) < per_face}:
        left = " ".join(face_text(kind, v) for v in sorted(wanted))
        short = sum(per_face - len(photos[face]) for face in wanted)
        click.echo(f"throw the {kind}: {short} photo(s) of {len(wanted)} face(s) to go ({left})")
        progress.show("throw", wanted)
        before_throw()
        frame = settled_throw(camera, watch)
        reading = read_dice(frame)
        progress.show("confirm", wanted, guess_of(reading, kind))
        value = answer(reading, wanted)
        if value is None or value not in wanted:
            click.echo("  not kept: that face has its photos already, or none was given")
            continue
        photos[value].append(frame)
    return photos


def ask_person(kind: str) -> Answer:
    """Return an Answer that shows the reader's guess and asks the person at the terminal."""

    def answer(reading: Reading, wanted: set[int]) -> int | None:
        shown = _shown(kind, guess_of(reading, kind))
        text = click.prompt(
            f"  the camera reads {shown}: what does it show (enter: {shown})",
            default=shown,
            show_default=False,
        )
        return _face_typed(text, shown)

    return answer


def ask_anywhere(kind: str, answers: queue.Queue[str]) -> Answer:
    """Return an Answer taking the first of a line typed at the terminal or a face tapped on
    a display page (both arrive on `answers`)."""

    def answer(reading: Reading, wanted: set[int]) -> int | None:
        shown = _shown(kind, guess_of(reading, kind))
        click.echo(
            f"  the camera reads {shown}: what does it show? (type it, or enter for "
            f"{shown}; or tap it on the display page)"
        )
        return _face_typed(answers.get(), shown)

    return answer


def _shown(kind: str, guess: int | None) -> str:
    return face_text(kind, guess) if guess is not None else "?"


def _face_typed(text: str, shown: str) -> int | None:
    """Return the face a person typed (nothing: the camera's guess), or None if no number."""
    try:
        return int(text.strip() or shown)
    except ValueError:
        return None


def _read_terminal(link: TeachLink) -> None:
    """Hand every line typed at the terminal to the link, until the input ends."""

    def read() -> None:
        for line in sys.stdin:
            link.typed(line)

    threading.Thread(target=read, name="teach-terminal", daemon=True).start()


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


def teach_from_camera(
    config: TowerConfig,
    kind: str,
    name: str | None,
    profile: Path,
    sim: bool,
    use_mqtt: bool = False,
    per_face: int = PHOTOS_A_FACE,
    keep_in: Path | None = None,
) -> TeachReport:
    """Run the guided flow on the config's camera (and display pages, if `use_mqtt`); teach
    the photos into the profile, keeping the die in `keep_in` (else the profile's)."""
    with _teach_link(config, use_mqtt) as link:
        progress = Progress(kind, name, link, answerable=not sim)
        photos = _throws(config, kind, sim, progress, per_face)
        progress.show("teaching", set())
        try:
            report = _teach_photos(kind, name, profile, photos, config.camera.reader, keep_in)
        except TeachError as error:
            progress.show("refused", set(), message=str(error))
            raise
        progress.show("done", set(), message=f"taught {len(report.added)} faces")
        return report


def _throws(
    config: TowerConfig, kind: str, sim: bool, progress: Progress, per_face: int
) -> dict[int, list[np.ndarray]]:
    """Collect `per_face` confirmed photos of every face from the config's camera."""
    calibration = _calibration(config)
    with open_camera(config.camera, seed=0) as camera:
        if sim and isinstance(camera, SimulatedSource):
            answer, throw = sim_player(camera, kind)
            empty = SettleWatch(empty_tray=camera.empty)
            return collect(camera, kind, answer, empty, throw, progress, per_face)
        watch = SettleWatch(empty_tray=calibration.background)
        if progress.link is None:
            return collect(camera, kind, ask_person(kind), watch, per_face=per_face)
        _read_terminal(progress.link)
        answer = ask_anywhere(kind, progress.link.answers)
        return collect(camera, kind, answer, watch, progress=progress, per_face=per_face)


@contextlib.contextmanager
def _teach_link(config: TowerConfig, use_mqtt: bool) -> Iterator[TeachLink | None]:
    """Link the flow to the display pages; without a broker it goes on at the terminal."""
    if not use_mqtt:
        yield None
        return
    try:
        link = TeachLink(config.mqtt, config.table.store.parent).start()
    except (BrokerStartError, ValueError, OSError) as error:  # no broker, password, TLS file
        click.echo(f"display pages off: {error}", err=True)
        yield None
        return
    try:
        yield link
    finally:
        link.stop()


def _teach_photos(
    kind: str,
    name: str | None,
    profile: Path,
    photos: dict[int, list[np.ndarray]],
    reader: ReaderSettings,
    keep_in: Path | None,
) -> TeachReport:
    """Keep the confirmed photos beside the profile, and teach from them."""
    folder = profile / "photos"
    folder.mkdir(parents=True, exist_ok=True)
    labels, paths = {}, []
    for value, frames in sorted(photos.items()):
        for i, frame in enumerate(frames):
            paths.append(folder / f"{kind}_{value:02d}_{i + 1}.png")
            cv2.imwrite(str(paths[-1]), frame)
            labels[paths[-1].name] = {"die": kind, "value": value}
    (folder / "labels.json").write_text(json.dumps(labels, indent=1), encoding="utf-8")
    names = {kind: name} if name else {}
    return teach(profile, folder / "labels.json", paths, names, reader, progress, keep_in)


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
    views, skipped = sum(report.added.values()), ", ".join(report.skipped)
    skipped_words = f"; no dice to teach in {skipped}" if skipped else ""
    click.echo(
        f"taught {len(report.added)} faces ({views} views) into {profile}; "
        f"check trays read right: {100 * report.before:.1f} % before, "
        f"{100 * report.after:.1f} % with it{skipped_words}"
    )
    if report.dice:
        click.echo(f"each read by a reader of its own: {', '.join(report.dice)}")


@click.command("teach")
@click.argument("profile", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.argument("images", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--labels",
    "labels_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help='JSON from photo file name to {"die": "d20", "value": 17} (one die) or '
    '{"dice": [{"die", "value", "box"}, ...]} (a tray; boxes x0,y0,x1,y1 0..1).',
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Teach at the tower, with its camera: throw and confirm.",
)
@click.option("--sim", is_flag=True, help="Teach at the simulated tower (a player throws).")
@click.option("--die", "kind", type=click.Choice(KINDS), help="The kind to teach at the tower.")
@click.option("--name", help='What the table calls the die taught at the tower ("white omen").')
@click.option(
    "--photos",
    "per_face",
    type=click.IntRange(1, 10),
    default=PHOTOS_A_FACE,
    show_default=True,
    help="Confirmed photos of each face to teach the die at the tower from.",
)
@click.option(
    "--from-corrections",
    "from_corrections",
    is_flag=True,
    help="With --config: learn from the dice the GM entered (table.corrections); "
    "adopted only if it reads the examples set aside at least as well.",
)
@click.option(
    "--rollback",
    is_flag=True,
    help="With --config: put back the profile the last learning replaced.",
)
@click.option(
    "--mqtt/--no-mqtt",
    "use_mqtt",
    default=None,
    help="Show the flow on the display pages, which may confirm faces too "
    "(default: on with --config, off with --sim alone).",
)
def teach_command(
    profile: Path | None,
    images: tuple[Path, ...],
    labels_path: Path | None,
    config_path: Path | None,
    sim: bool,
    kind: str | None,
    name: str | None,
    per_face: int,
    from_corrections: bool,
    rollback: bool,
    use_mqtt: bool | None,
) -> None:
    """Teach the reader the table's own dice into the PROFILE folder (made, or extended).

    From photos: PROFILE --labels LABELS.json IMAGE ... At the tower: --config FILE --die
    KIND [--name NAME] [PROFILE] (PROFILE defaults to the config's [camera.reader] profile,
    else a `dice` folder beside the calibration). Read with it by `tidetower read --profile
    PROFILE` or the config's [camera.reader] profile. A profile that would read other dice
    worse is refused, and nothing is written."""
    try:
        if config_path is None and not sim:
            if profile is None or labels_path is None or not images:
                raise click.UsageError(
                    "give PROFILE --labels LABELS.json IMAGE ..., "
                    "or --config FILE --die KIND to teach at the tower"
                )
            _say(teach(profile, labels_path, images, {}, along=progress), profile)
            return
        if from_corrections or rollback:
            _from_the_table(_guided_config(config_path), profile, rollback)
            return
        if kind is None:
            raise click.UsageError("--die KIND: which die is taught at the tower")
        config = _guided_config(config_path)
        target = profile or profile_home(config)
        linked = config_path is not None if use_mqtt is None else use_mqtt
        beside = None if config_path is None else dice_folder(config.table.store)
        report = teach_from_camera(config, kind, name, target, sim, linked, per_face, beside)
        _say(report, target)
    except (TeachError, ProfileError) as error:
        raise click.ClickException(str(error)) from None
    except FrameSourceError as error:
        raise click.ClickException(f"camera: {error}") from None
    except OSError as error:  # a full disk while a profile is written: nothing was adopted
        raise click.ClickException(f"{error.filename or 'the profile'}: {error.strerror}") from None


def _from_the_table(config: TowerConfig, profile: Path | None, back: bool) -> None:
    """Learn from the table's corrections into the profile, or roll the profile back."""
    target = profile or profile_home(config)
    if back:
        rollback(target)
        click.echo(f"{target}: the previous profile is back")
        return
    start = time.perf_counter()
    done = learn_from_corrections(
        Corrections(config.table.corrections),
        target,
        replace(config.camera.reader, profile=None),
        _calibration(config),
        progress,
    )
    verdict = "adopted" if done.adopted else "not adopted: it reads them worse; kept the old"
    click.echo(
        f"learned from {done.taught} corrections, checked on {done.checked} set aside: "
        f"{100 * done.before:.1f} % of their dice right before, "
        f"{100 * done.after:.1f} % with it; {verdict} "
        f"({time.perf_counter() - start:.0f} s)"
    )
