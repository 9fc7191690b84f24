"""Read the dice in one tray photo: the entry point the rest of Tide Tower calls."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from tidetower.engine.tray import Box, DieRead, Reading, SetAside, Unreadable
from tidetower.vision.colours import body_colour, colour_name
from tidetower.vision.d6.decide import Verdict, split
from tidetower.vision.d6.find import MIN_DIE_PX, Candidate, find_dice
from tidetower.vision.dice.table import PROFILE_DICE
from tidetower.vision.dice.which import Known, by_table, table_at
from tidetower.vision.numerals.decide import TAUGHT_TURNS, as_taught, judge_all, look, net_of
from tidetower.vision.numerals.profile import Match, Profile, load_profile
from tidetower.vision.numerals.recogniser import RecogniserMissing, model_path
from tidetower.vision.pictures import ImageError, load_image
from tidetower.vision.settings import Calibration, ReaderSettings
from tidetower.vision.structure import Detail, structure

__all__ = [
    "Calibration",
    "ImageError",
    "ReaderSettings",
    "load_image",
    "read_dice",
    "reader_problem",
    "refusal",
]

WHOLE_FRAME: Box = (0.0, 0.0, 1.0, 1.0)
"""Where a picture the reader refuses is unreadable: all of it."""


def reader_problem(settings: ReaderSettings) -> str | None:
    """Return why the reader cannot start with these settings (the recogniser's model is not
    installed), in one line naming the key and the fix, or None when it can."""
    if not settings.numerals:
        return None
    try:
        model_path()
    except RecogniserMissing as error:
        return f"camera.reader.numerals: {error} (or numerals = false to read pip d6 only)"
    return None


def refusal(image: np.ndarray, work_size: int) -> str | None:
    """Return why a picture cannot hold a die the reader reads (it is no picture, or it is
    narrower than MIN_DIE_PX, as it is or as read at `work_size`), or None when it can."""
    if not _is_picture(image):
        return f"not a picture: an array of shape {getattr(image, 'shape', type(image))}"
    h, w = image.shape[:2]
    size, need = f"the picture is {w}x{h} px", f"a die at least {MIN_DIE_PX} px across"
    if min(h, w) < MIN_DIE_PX:
        return (
            f"{size}, too small to hold a die: the reader needs {need}, "
            f"so a picture at least {MIN_DIE_PX}x{MIN_DIE_PX} px"
        )
    if min(h, w) * work_size / max(h, w) < MIN_DIE_PX:
        least = -(-MIN_DIE_PX * max(h, w) // work_size)  # rounded up
        return (
            f"{size}, too narrow to hold a die: read at {work_size} px along its longer "
            f"side, it needs {least} px across to hold {need}"
        )
    return None


def _is_picture(image: np.ndarray) -> bool:
    """Return whether an array is shaped as a picture: grey, or of 1, 3 or 4 channels."""
    if not isinstance(image, np.ndarray):
        return False
    return image.ndim == 2 or (image.ndim == 3 and image.shape[2] in (1, 3, 4))


def as_bgr(image: np.ndarray) -> np.ndarray | None:
    """Return the image as 8-bit BGR, or None when it is empty or shaped wrong to read."""
    if not _is_picture(image) or image.size == 0:
        return None
    if image.dtype != np.uint8:
        top = 65535.0 if image.dtype == np.uint16 else max(float(np.nanmax(image)), 1.0)
        image = np.clip(np.nan_to_num(image.astype(np.float32)) * (255.0 / top), 0, 255)
        image = image.astype(np.uint8)
    if image.ndim == 2:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR))
    channels = image.shape[2]
    if channels == 4:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_BGRA2BGR))
    if channels == 1:
        return np.asarray(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR))
    return image


def to_work_size(image: np.ndarray, work_size: int) -> np.ndarray:
    """Scale so the longer side is work_size: big photos read as fast as small ones."""
    h, w = image.shape[:2]
    scale = work_size / max(h, w)
    if abs(scale - 1.0) < 1e-3:
        return image
    size = (max(1, round(w * scale)), max(1, round(h * scale)))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    return np.asarray(cv2.resize(image, size, interpolation=interp))


def read_dice(
    image: np.ndarray,
    calibration: Calibration | None = None,
    settings: ReaderSettings | None = None,
) -> Reading:
    """Read every die in a BGR tray photo; dice it cannot read are listed as unreadable,
    and a picture that cannot hold a die is one unreadable whole, saying why."""
    start = time.perf_counter()
    settings = settings or ReaderSettings()
    reason = refusal(image, settings.work_size)
    bgr = None if reason else as_bgr(image)
    if bgr is None:
        refused = Unreadable(WHOLE_FRAME, reason or "not a picture")
        return Reading(unreadable=(refused,), ms=(time.perf_counter() - start) * 1000)
    work = to_work_size(bgr, settings.work_size)
    detail = Detail.of(bgr, work)
    if settings.balance:
        work = balanced(work)
    floor = _calibrated_floor(calibration, work)
    found = find_dice(work, settings, calibration.tray if calibration else None, floor)
    candidates = standing_out(detail, found, settings)
    dice, unreadable = split(judge(bgr, work, candidates, settings))
    if settings.close_up and not dice and not unreadable:
        frame = standing_out(detail, [close_up(work)], settings)
        dice, unreadable = split(judge(bgr, work, frame, settings))
    dice, aside = pinned(work, named(work, dice), settings.pins)
    return Reading(dice, unreadable, (time.perf_counter() - start) * 1000, aside)


def standing_out(
    detail: Detail, candidates: list[Candidate], settings: ReaderSettings
) -> list[Candidate]:
    """Keep the candidates with structure at a die's scale (`structure.structure`): the
    finders see dice in pixel noise, which has none."""
    return [c for c in candidates if structure(detail, c) >= settings.min_structure]


WHITE = 190.0
"""The level the brightest pixels are brought up to if below: a dim photo. The d6-tray dev
photos' brightest lie at 195 and up (median 205), so none of them is touched."""
BRIGHTEST = 99.97
"""The percentile taken as the brightest: about 90 pixels of a 640x480 photo, a few pips."""
MAX_GAIN = 4.0
TOLERATED = 1.15
"""Casts and dimness the nets learned to read need gains below this: every rendered training
tray below 1.09, every real d6-tray photo below 1.07. Past it, the photo is balanced."""


def balanced(work: np.ndarray) -> np.ndarray:
    """Undo a colour cast or dim light stronger than the nets learned from: white balance
    where the brightest pixels (white pips, glare) and the floor (the median) agree on a
    cast, then exposure up to WHITE if even the brightest are dark."""
    pixels = work.reshape(-1, 3)
    top = np.maximum(np.percentile(pixels, BRIGHTEST, axis=0), 1.0)
    floor = np.maximum(np.median(pixels, axis=0), 1.0)
    cast = np.minimum(top.max() / top, floor.max() / floor)
    gains = np.clip(cast * max(1.0, WHITE / top.max()), 1.0, MAX_GAIN)
    if float(gains.max()) < TOLERATED:
        return work
    return np.asarray(np.clip(work * gains, 0, 255).astype(np.uint8))


def named(work: np.ndarray, dice: tuple[DieRead, ...]) -> tuple[DieRead, ...]:
    """Name each die not named yet (a taught one has its profile's name) by its colour and
    kind, in the reader's colour names: "red d20"."""
    return tuple(
        die
        if die.named
        else replace(die, named=f"{colour_name(body_colour(work, die.box))} {die.die}")
        for die in dice
    )


def pinned(
    work: np.ndarray, dice: tuple[DieRead, ...], pins: dict[str, str]
) -> tuple[tuple[DieRead, ...], tuple[SetAside, ...]]:
    """Split the dice into those that count and those of a pinned kind in another colour."""
    if not pins:
        return dice, ()
    kept, aside = [], []
    for die in dice:
        want = pins.get(die.die)
        seen = colour_name(body_colour(work, die.box)) if want else None
        if want is None or seen == want:
            kept.append(die)
        else:
            aside.append(SetAside(die, f"a {seen} {die.die}: only the {want} one counts here"))
    return tuple(kept), tuple(aside)


def close_up(work: np.ndarray) -> Candidate:
    """Return the whole photo as one die: a close-up, the die filling most of the frame."""
    h, w = work.shape[:2]
    return Candidate(w / 2, h / 2, min(w, h) * 0.8, 1.0)


def judge(
    frame: np.ndarray, work: np.ndarray, candidates: list[Candidate], settings: ReaderSettings
) -> list[Verdict]:
    """Judge every candidate (its kind, then its pips or numerals); a die of the table's own
    is then read by its own reader (`vision.dice`)."""
    return by_table(frame, judge_untaught(frame, work, candidates, settings), table_of(settings))


def table_of(settings: ReaderSettings) -> tuple[Known, ...]:
    """The table's dice the settings name: in the profile's `dice/` and the `dice` folder."""
    folders = [Path(settings.profile) / PROFILE_DICE] if settings.profile else []
    folders += [Path(settings.dice)] if settings.dice else []
    return tuple(die for folder in folders for die in table_at(folder))


def judge_untaught(
    frame: np.ndarray, work: np.ndarray, candidates: list[Candidate], settings: ReaderSettings
) -> list[Verdict]:
    """Judge every candidate as a die the tower has not met; a taught profile's match
    stands over the reader's verdict."""
    profile = load_profile(settings.profile) if settings.profile else None
    judged = judge_all(frame, work, candidates, settings, profile.faces if profile else None)
    if profile is None or not candidates:
        return judged
    embeddings = look(work, candidates, TAUGHT_TURNS, net_of(settings)).embeddings
    taught = profile.match(embeddings)
    size = (work.shape[1], work.shape[0])
    return [
        taught_name(as_taught(c, match, verdict, size), match, profile)
        for c, match, verdict in zip(candidates, taught, judged, strict=True)
    ]


def taught_name(verdict: Verdict, match: Match | None, profile: Profile) -> Verdict:
    """A die read as a taught face of a kind the profile names, with that name."""
    if match is None or not isinstance(verdict, DieRead):
        return verdict
    name = profile.names.get(verdict.die, "")
    return replace(verdict, named=name) if name else verdict


def _calibrated_floor(calibration: Calibration | None, work: np.ndarray) -> np.ndarray | None:
    """Return the empty-tray frame at the work image's size, when calibration has one."""
    if calibration is None or calibration.background is None:
        return None
    background = as_bgr(calibration.background)
    if background is None:
        return None
    h, w = work.shape[:2]
    return np.asarray(cv2.resize(background, (w, h), interpolation=cv2.INTER_AREA))
