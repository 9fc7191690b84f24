"""Learn from the GM's corrections: teach a new profile from most of them, adopt it only if it
reads the rest (set aside, never taught) at least as well, and keep the previous one.

`tidetower teach --config FILE --from-corrections` and `--rollback` call this.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tidetower.engine.files import inside
from tidetower.firmware.config import TowerConfig
from tidetower.firmware.corrections import Corrections
from tidetower.firmware.profiles import adopt, readable, recover, work_folder
from tidetower.vision.numerals.teach import TeachError, parse_labels, teach
from tidetower.vision.progress import Along, T, quietly
from tidetower.vision.read import ImageError, load_image, read_dice
from tidetower.vision.score import Label, Tally, score
from tidetower.vision.settings import Calibration, ReaderSettings

log = logging.getLogger(__name__)
CHECK_EVERY = 5
"""One example in this many (by order of arrival) is set aside to check, never taught."""
MIN_EXAMPLES = 5
STOP_SECONDS = 5.0
"""How long a stopping tower waits for learning to stop: one photo's read on a Pi, and far
inside the unit's TimeoutStopSec (10 s)."""


@dataclass(frozen=True)
class Learned:
    """What learning did: examples taught and checked, and the checked dice read right
    with the profile before and after."""

    taught: int
    checked: int
    before: float
    after: float
    adopted: bool


def split(names: list[str]) -> tuple[list[str], list[str]]:
    """Return (to teach, to check): every CHECK_EVERY-th example is set aside."""
    check = names[CHECK_EVERY - 1 :: CHECK_EVERY]
    return [n for n in names if n not in check], check


class LearningStopped(TeachError):
    """Learning was asked to stop (the tower is stopping) and did, adopting nothing."""


def learn_from_corrections(
    corrections: Corrections,
    profile: Path,
    settings: ReaderSettings,
    calibration: Calibration | None = None,
    along: Along = quietly,
    stop: threading.Event | None = None,
) -> Learned:
    """Teach a candidate profile from the corrections; adopt it if it reads the set-aside
    ones at least as well as the current reader, keeping the old one as PROFILE.previous.
    `along` shows how far it got (`progress` on a terminal); `stop` ends it early."""
    recover(profile)
    work = work_folder(profile)
    try:
        return _learn(
            _set_aside(corrections, work),
            profile,
            work,
            settings,
            calibration,
            _stoppable(along, stop or threading.Event()),
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _learn(
    examples: Corrections,
    profile: Path,
    work: Path,
    settings: ReaderSettings,
    calibration: Calibration | None,
    along: Along,
) -> Learned:
    """Teach the candidate in `work`, check it against the current profile, adopt it or not."""
    labels = examples.labels()
    if len(labels) < MIN_EXAMPLES:
        raise TeachError(f"{len(labels)} corrections kept: at least {MIN_EXAMPLES} are needed")
    teach_names, check_names = split(list(labels))
    base = readable(profile)
    current = str(base) if base is not None else None
    candidate = work / "profile"
    if base is not None:
        shutil.copytree(base, candidate)
    photos = [inside(examples.folder, n) for n in teach_names]
    teach(candidate, examples.labels_path, photos, {}, settings, along)
    check = functools.partial(
        _share_right, examples, check_names, calibration=calibration, along=along
    )
    before = check(replace(settings, profile=current))
    after = check(replace(settings, profile=str(candidate)))
    if after >= before:
        adopt(candidate, profile)
    return Learned(len(teach_names), len(check_names), before, after, after >= before)


def _set_aside(corrections: Corrections, work: Path) -> Corrections:
    """The corrections as they are now, linked into `work`: pruning the table's folder while
    learning reads them takes nothing from under it."""
    kept = Corrections(work / "examples", keep=0)
    labels = {}
    for name, entry in corrections.labels().items():
        try:
            _link_or_copy(inside(corrections.folder, name), inside(kept.folder, name))
        except FileNotFoundError:
            continue  # pruned between the labels and the link: learn without it
        labels[name] = entry
    kept.labels_path.write_text(json.dumps(labels), encoding="utf-8")
    return kept


def _link_or_copy(source: Path, target: Path) -> None:
    """A hard link (no bytes copied), or a copy where the filesystem has none."""
    try:
        os.link(source, target)
    except FileNotFoundError:
        raise
    except OSError:
        shutil.copyfile(source, target)


def _stoppable(along: Along, stop: threading.Event) -> Along:
    """`along`, raising LearningStopped between two items once `stop` is set."""

    @contextlib.contextmanager
    def going(items: Iterable[T], label: str, length: int | None = None) -> Iterator[Iterable[T]]:
        with along(items, label, length) as inner:
            yield _until(inner, stop)

    return going


def _until(items: Iterable[T], stop: threading.Event) -> Iterator[T]:
    """The items, until `stop` is set."""
    for item in items:
        if stop.is_set():
            raise LearningStopped("learning stopped: the tower is stopping; nothing adopted")
        yield item


def _share_right(
    corrections: Corrections,
    names: list[str],
    settings: ReaderSettings,
    calibration: Calibration | None,
    along: Along = quietly,
) -> float:
    """Return the share of the named examples' dice the reader gets right."""
    raw, tally = corrections.labels(), Tally()
    with along(names, "checking") as going:
        for name in going:
            try:
                image = load_image(inside(corrections.folder, name))
            except ImageError as error:
                raise TeachError(str(error)) from None
            truth = tuple(
                Label(value, box or (0.0, 0.0, 1.0, 1.0), kind)
                for kind, value, box in parse_labels(raw, name)
            )
            reading = read_dice(image, calibration, settings)
            tally.add(score(reading, truth), reading.ms)
    return tally.right / max(tally.dice, 1)


def profile_home(config: TowerConfig) -> Path:
    """Return where the tower keeps its taught dice: the reader's profile, else beside the
    calibration, else beside the corrections."""
    if config.camera.reader.profile:
        return Path(config.camera.reader.profile)
    if config.camera.calibration is not None:
        return config.camera.calibration / "dice"
    return config.table.corrections.parent / "dice"


@dataclass(frozen=True)
class LearnStatus:
    """Where learning stands, for the display: the corrections kept, and the last result."""

    corrections: int
    state: str = "idle"
    """idle, learning, adopted, kept (the new profile read worse), or failed."""
    learned: Learned | None = None
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return the retained `learn` payload's fields."""
        out: dict[str, Any] = {
            "corrections": self.corrections,
            "state": self.state,
            "message": self.message,
        }
        if self.learned is not None:
            done = self.learned
            out |= {"taught": done.taught, "checked": done.checked}
            out |= {"before": round(done.before, 4), "after": round(done.after, 4)}
        return out


class Learner:
    """Learns from the GM's corrections in the background when asked, one run at a time,
    and hands an adopted profile to the reader (`adopt`)."""

    def __init__(
        self,
        corrections: Corrections,
        profile: Path,
        settings: Callable[[], ReaderSettings],
        adopt: Callable[[Path], None],
        calibration: Calibration | None = None,
    ) -> None:
        self.corrections, self.profile = corrections, profile
        self._settings, self._adopt, self._calibration = settings, adopt, calibration
        self.on_status: list[Callable[[LearnStatus], None]] = []
        self._status = LearnStatus(len(corrections))
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._stop = threading.Event()
        corrections.on_kept.append(lambda: self._set(corrections=len(corrections)))

    @property
    def status(self) -> LearnStatus:
        """Where learning stands now."""
        return self._status

    def learn(self) -> int:
        """Start learning in the background; return the corrections it learns from."""
        count = len(self.corrections)
        with self._lock:
            if self._status.state == "learning":
                raise ValueError("learning already: wait for it to finish")
            if count < MIN_EXAMPLES:
                raise ValueError(f"{count} corrections kept: at least {MIN_EXAMPLES} are needed")
            self._done.clear()
            self._stop.clear()
            self._set_locked(corrections=count, state="learning", message="")
        threading.Thread(target=self._run, name="learn", daemon=True).start()
        return count

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a learning run to end; return whether it did within the timeout."""
        return self._done.wait(timeout)

    def stop(self, timeout: float = STOP_SECONDS) -> bool:
        """Ask a learning run to stop between two photos and wait for it (adopting nothing);
        return whether it ended within `timeout`."""
        self._stop.set()
        return self._done.wait(timeout) if self._status.state == "learning" else True

    def _run(self) -> None:
        try:
            settings = replace(self._settings(), profile=None)
            done = learn_from_corrections(
                self.corrections, self.profile, settings, self._calibration, stop=self._stop
            )
        except LearningStopped as error:
            self._set(state="failed", learned=None, message=str(error))
        except Exception as error:  # whatever it was, the tower goes on reading without it
            log.warning("learning from corrections failed: %s", error, exc_info=True)
            self._set(state="failed", learned=None, message=str(error))
        else:
            if done.adopted:
                self._adopt(self.profile)
            self._set(state="adopted" if done.adopted else "kept", learned=done)
        finally:
            self._done.set()

    def _set(self, **change: Any) -> None:
        with self._lock:
            self._set_locked(**change)

    def _set_locked(self, **change: Any) -> None:
        self._status = replace(self._status, **change)
        for listener in self.on_status:
            listener(self._status)
