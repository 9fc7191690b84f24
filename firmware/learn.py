"""Learn from the GM's corrections: teach a new profile from most of them, adopt it only if it
reads the rest (set aside, never taught) at least as well, and keep the previous one.

`tidetower teach --config FILE --from-corrections` and `--rollback` call this.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tidetower.engine.files import inside
from tidetower.firmware.config import TowerConfig
from tidetower.firmware.corrections import Corrections
from tidetower.vision.numerals.profile import empty_profile, load_profile
from tidetower.vision.numerals.teach import TeachError, parse_labels, teach
from tidetower.vision.progress import Along, quietly
from tidetower.vision.read import ImageError, load_image, read_dice
from tidetower.vision.score import Label, Tally, score
from tidetower.vision.settings import Calibration, ReaderSettings

log = logging.getLogger(__name__)
CHECK_EVERY = 5
"""One example in this many (by order of arrival) is set aside to check, never taught."""
MIN_EXAMPLES = 5


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


def learn_from_corrections(
    corrections: Corrections,
    profile: Path,
    settings: ReaderSettings,
    calibration: Calibration | None = None,
    along: Along = quietly,
) -> Learned:
    """Teach a candidate profile from the corrections; adopt it if it reads the set-aside
    ones at least as well as the current reader, keeping the old one as PROFILE.previous.
    `along` shows how far it got (`progress` on a terminal)."""
    labels = corrections.labels()
    if len(labels) < MIN_EXAMPLES:
        raise TeachError(f"{len(labels)} corrections kept: at least {MIN_EXAMPLES} are needed")
    teach_names, check_names = split(list(labels))
    current = str(profile) if (profile / "profile.json").exists() else None
    with tempfile.TemporaryDirectory(prefix="tidetower-learn-") as tmp:
        candidate = Path(tmp) / "profile"
        if current is not None:
            shutil.copytree(profile, candidate)
        teach(
            candidate,
            corrections.labels_path,
            [inside(corrections.folder, n) for n in teach_names],
            {},
            settings,
            along,
        )
        before = _share_right(
            corrections, check_names, replace(settings, profile=current), calibration
        )
        after = _share_right(
            corrections, check_names, replace(settings, profile=str(candidate)), calibration
        )
        adopted = after >= before
        if adopted:
            _swap_in(candidate, profile)
    return Learned(len(teach_names), len(check_names), before, after, adopted)


def _share_right(
    corrections: Corrections,
    names: list[str],
    settings: ReaderSettings,
    calibration: Calibration | None,
) -> float:
    """Return the share of the named examples' dice the reader gets right."""
    raw, tally = corrections.labels(), Tally()
    for name in names:
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


def _swap_in(candidate: Path, profile: Path) -> None:
    """Make the candidate the profile; the profile it replaces (an empty one if there was
    none: it reads as no profile) becomes PROFILE.previous."""
    previous = previous_of(profile)
    shutil.rmtree(previous, ignore_errors=True)
    if profile.exists():
        profile.rename(previous)
    else:
        width = load_profile(candidate).embeddings.shape[1]
        empty_profile(width).save(previous, 0)
    shutil.copytree(candidate, profile)


def profile_home(config: TowerConfig) -> Path:
    """Return where the tower keeps its taught dice: the reader's profile, else beside the
    calibration, else beside the corrections."""
    if config.camera.reader.profile:
        return Path(config.camera.reader.profile)
    if config.camera.calibration is not None:
        return config.camera.calibration / "dice"
    return config.table.corrections.parent / "dice"


def previous_of(profile: Path) -> Path:
    """Where the profile a learning replaced is kept."""
    return profile.with_name(profile.name + ".previous")


def rollback(profile: Path) -> None:
    """Put the previous profile back (the current one becomes the previous: undo twice to
    redo)."""
    previous = previous_of(profile)
    if not previous.exists():
        raise TeachError(f"no previous profile to go back to ({previous} does not exist)")
    swap = profile.with_name(profile.name + ".swap")
    shutil.rmtree(swap, ignore_errors=True)
    if profile.exists():
        profile.rename(swap)
    previous.rename(profile)
    if swap.exists():
        swap.rename(previous)


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
            self._set_locked(corrections=count, state="learning", message="")
        threading.Thread(target=self._run, name="learn", daemon=True).start()
        return count

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a learning run to end; return whether it did within the timeout."""
        return self._done.wait(timeout)

    def _run(self) -> None:
        try:
            settings = replace(self._settings(), profile=None)
            done = learn_from_corrections(
                self.corrections, self.profile, settings, self._calibration
            )
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
