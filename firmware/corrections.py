"""The GM's corrections kept as labelled examples: each frame the tower could not finish
reading, with the faces that counted in the end, in the labels format `tidetower teach` reads;
and the GM finishing such a reading, die by die.

`tidetower teach PROFILE --labels FOLDER/labels.json FOLDER/*.png` learns from them.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from tidetower.engine.dice import DieError
from tidetower.engine.doubt import doubted
from tidetower.engine.files import HostileFile, inside, load_json
from tidetower.engine.rules import RuleError
from tidetower.engine.session import SessionState
from tidetower.engine.store import OutboxEvent
from tidetower.engine.tray import (
    Attention,
    DieRead,
    Reading,
    Unreadable,
    roll_of,
    unreadable_reason,
)
from tidetower.firmware.rolls import entered_face

LABELS = "labels.json"
log = logging.getLogger(__name__)


class Corrections:
    """A bounded folder of corrected frames (lossless PNG) and their labels, oldest dropped."""

    def __init__(self, folder: str | Path, keep: int = 200) -> None:
        self.folder = Path(folder)
        self.keep = keep
        self.folder.mkdir(parents=True, exist_ok=True)
        self.on_kept: list[Callable[[], None]] = []
        """Called after each correction is kept (the display shows the count)."""

    @property
    def labels_path(self) -> Path:
        """The labels file: photo file name to its dice, as teach reads it."""
        return self.folder / LABELS

    def labels(self) -> dict[str, Any]:
        """Return the labels kept so far (an unreadable file counts as none, and says so);
        an entry whose name is no plain file name of this folder is left out, and said."""
        if not self.labels_path.exists() and not self.labels_path.is_symlink():
            return {}
        try:
            raw = load_json(self.labels_path)
        except HostileFile as error:
            log.warning("corrections: %s; starting the labels afresh", error)
            return {}
        if not isinstance(raw, dict):
            return {}
        kept = {name: entry for name, entry in raw.items() if _plain(self.folder, name, entry)}
        if len(kept) < len(raw):
            log.warning("corrections: left out %d entries of %s", len(raw) - len(kept), LABELS)
        return kept

    def __len__(self) -> int:
        return len(self.labels())

    def keep_correction(
        self, roll_id: str, frame: np.ndarray, read: Reading, final: Reading
    ) -> None:
        """Keep a frame and the faces the GM settled (`final`) beside what the camera read."""
        if self.keep == 0:
            return
        name = f"{roll_id}.png"
        if not cv2.imwrite(str(self.folder / name), frame):
            raise OSError(f"cannot write {self.folder / name}")
        labels = self.labels()
        labels[name] = {
            "roll": roll_id,
            "dice": [{k: d.to_dict()[k] for k in ("die", "value", "box")} for d in final.dice],
            "camera": read.to_dict(),
        }
        self._save(self._pruned(labels))
        for listener in self.on_kept:
            listener()

    def keep_or_warn(self, roll_id: str, frame: np.ndarray, read: Reading, final: Reading) -> None:
        """Keep a correction; a full disk is no reason to stop the tower, so failing warns."""
        try:
            self.keep_correction(roll_id, frame, read, final)
        except OSError as error:
            log.warning("could not keep the GM's correction: %s", error)

    def keep_finished(self, roll_id: str, frame: np.ndarray | None, finished: Attention) -> None:
        """Keep a reading the GM finished (see `entered`) with the frame it was read from."""
        if frame is not None and finished.camera is not None and finished.reading is not None:
            self.keep_or_warn(roll_id, frame, finished.camera, finished.reading)

    def _pruned(self, labels: dict[str, Any]) -> dict[str, Any]:
        """Drop the oldest examples beyond `keep` (labels keep their order of arrival)."""
        names = list(labels)
        dropped = names[: max(0, len(names) - self.keep)]
        for name in dropped:
            inside(self.folder, name).unlink(missing_ok=True)
            del labels[name]
        if dropped:
            log.info(
                "corrections: dropped the %d oldest, keeping the last %d", len(dropped), self.keep
            )
        return labels

    def _save(self, labels: dict[str, Any]) -> None:
        """Write the labels whole or not at all: a kill mid-write leaves the old file."""
        part = self.labels_path.with_suffix(".part")
        part.write_text(json.dumps(labels, indent=1), encoding="utf-8")
        os.replace(part, self.labels_path)


def _plain(folder: Path, name: str, entry: object) -> bool:
    """True for a labels entry the tower could have written: a photo in `folder`, its dice."""
    try:
        inside(folder, name)
    except HostileFile:
        return False
    return isinstance(entry, dict) and name.endswith(".png")


def entered(pending: Attention | None, index: int, die: str, value: int) -> Attention:
    """Return the pending reading with its unreadable die number `index` entered by the GM
    as `die` showing `value`, and the camera's own reading kept beside it; refuse, changing
    nothing, when no reading waits or the die or the face does not exist."""
    waiting, reading, place = _waiting_for(pending, index)
    value = entered_face(die, value)  # refuse an impossible face before changing anything
    asked = reading.unreadable[place]
    named = asked.named if asked.die == die else ""  # the table's die, if it is the one typed
    typed = DieRead(die, value, asked.box, 1.0, typed=True, named=named)
    return _settled(waiting, reading, place, (*reading.dice, typed))


def not_a_die(pending: Attention | None, index: int) -> Attention:
    """Return the pending reading without its unreadable die `index`, which the GM says is no
    die (a tray corner, a shadow): absent from the dice, so a correction kept of it says so;
    refused, changing nothing, when it is all that is left (throw again instead)."""
    waiting, reading, place = _waiting_for(pending, index)
    if not reading.dice and len(reading.unreadable) == 1:
        raise RuleError(
            f"unreadable die #{index} is all that is left of the throw: without it there is "
            "no roll; throw again instead"
        )
    return _settled(waiting, reading, place, reading.dice)


def question(state: SessionState, reading: Reading, refusal: str) -> tuple[Reading, str]:
    """The one question a throw the rules refuse puts to the GM, never a dropped throw: the
    reading with each die whose kind alone keeps it from fitting left for the GM to type,
    and a reason naming what was declared and seen and what the GM can do."""
    try:
        places = set(doubted(state, roll_of(reading)))
    except DieError:  # a tens d10 without its units die: no kind makes it fit
        places = set()
    places -= {i for i, d in enumerate(reading.dice) if d.typed}  # the GM's word stands
    asked = tuple(_doubt(d) for i, d in enumerate(reading.dice) if i in places)
    kept = tuple(d for i, d in enumerate(reading.dice) if i not in places)
    read = Reading(kept, (*reading.unreadable, *asked), reading.ms, reading.set_aside)
    first = len(reading.unreadable)
    numbers = ", ".join(f"#{n}" for n in range(first, len(read.unreadable)))
    typed = f"type {numbers} as it shows (die index=N kind value), " if asked else ""
    todo = f"{typed}throw again (rethrow), or change the declaration and read again (reread)"
    return read, f"the rules refuse this roll: {refusal}; {todo}"


def _doubt(die: DieRead) -> Unreadable:
    """A die read whose kind the rules doubt, left for the GM to type."""
    reason = f"read as a {die.die} showing {die.value}: the rules doubt its kind"
    return Unreadable(die.box, reason, named=die.named)


def _waiting_for(pending: Attention | None, index: int) -> tuple[Attention, Reading, int]:
    """The pending attention, its reading and the place in it of unreadable die number
    `index`, if that die still waits; else refused, saying which do."""
    reading = pending.reading if pending is not None else None
    if pending is None or reading is None:
        raise RuleError("no reading is waiting for a die to be entered")
    numbers = pending.die_numbers()
    if index in numbers:
        return pending, reading, numbers.index(index)
    left = ", ".join(f"#{n}" for n in numbers)
    camera = pending.camera or reading
    was = "is entered already" if 0 <= index < len(camera.unreadable) else "does not exist"
    raise RuleError(f"unreadable die #{index} {was}: still to enter {left}")


def _settled(
    pending: Attention, reading: Reading, place: int, dice: tuple[DieRead, ...]
) -> Attention:
    """The pending `reading` with the unreadable die at `place` settled as `dice` say, the
    others keeping their numbers, the reason following what is left and the camera's own
    reading kept beside it."""
    rest = tuple(u for i, u in enumerate(reading.unreadable) if i != place)
    numbers = tuple(n for i, n in enumerate(pending.die_numbers()) if i != place)
    completed = Reading(dice, rest, reading.ms)
    reason = pending.reason
    if rest and pending.kind == "unreadable":
        reason = unreadable_reason(rest, numbers)
    camera = pending.camera or reading
    return replace(pending, reason=reason, reading=completed, camera=camera, numbers=numbers)


def by_hand(read: Reading, dice: Sequence[tuple[str, int]]) -> Reading | None:
    """Return the faces entered by hand laid on the camera's boxes, or None where which box
    is which is not plain: other dice than the camera saw, or two faces of a kind changed."""
    out: list[DieRead] = []
    for kind in sorted({d.die for d in read.dice} | {k for k, _ in dice}):
        seen = [d for d in read.dice if d.die == kind]
        typed = [0 if (k, v) == ("d10", 10) else v for k, v in dice if k == kind]
        if kind in ("d10-tens", "d100") or len(seen) != len(typed):
            return None
        changed = []
        for die in seen:
            if die.value in typed:
                typed.remove(die.value)
                out.append(replace(die, confidence=1.0))
            else:
                changed.append(die)
        if len(changed) > 1:
            return None
        out += [replace(die, value=typed[0], confidence=1.0) for die in changed]
    return Reading(tuple(out))


Seen = tuple[str, np.ndarray, Reading]
"""A roll the camera read: its id, the frame and the reading."""


class CorrectionWatch:
    """Keeps what the GM corrects after a roll counted: a re-read that changed it, or an undo
    followed by the throw entered by hand (the GM finishing a reading is the loop's own)."""

    def __init__(self, corrections: Corrections, rereading: Callable[[], bool]) -> None:
        self.corrections = corrections
        self._rereading = rereading
        self._lock = threading.Lock()
        self._last: Seen | None = None
        self._undone: Seen | None = None
        self._by_reread = False

    def camera_roll(self, roll_id: str, frame: np.ndarray | None, reading: Reading) -> None:
        """Note a roll the camera read; one replacing an undone roll by a re-read is kept."""
        with self._lock:
            undone, by_reread = self._undone, self._by_reread
            self._undone, self._last = (
                None,
                (roll_id, frame, reading) if frame is not None else None,
            )
        if undone is not None and by_reread and _faces(undone[2]) != _faces(reading):
            self.corrections.keep_or_warn(roll_id, undone[1], undone[2], reading)

    def table_event(self, event: OutboxEvent) -> None:
        """Follow the table: an undo of the camera's last roll, then a throw entered by hand."""
        body = event.body if isinstance(event.body, dict) else {}
        record = body.get("record")
        if event.kind not in ("undo", "roll", "redo") or not isinstance(record, dict):
            return
        with self._lock:
            if event.kind == "undo":
                last = self._last
                if last is not None and record.get("id") == last[0]:
                    self._undone, self._by_reread = last, self._rereading()
                return
            if event.kind == "redo":
                self._undone = None  # put back as it was: nothing was corrected
                return
            if record.get("reading") is not None:
                return  # the camera's: `camera_roll` follows
            undone, self._undone = self._undone, None
        if undone is not None:
            self._keep_typed(str(record.get("id")), undone, _typed(record))

    def _keep_typed(self, roll_id: str, undone: Seen, typed: list[tuple[str, int]]) -> None:
        final = by_hand(undone[2], typed)
        if final is None:
            log.info("corrections: %s entered by hand does not say which die is which", roll_id)
        elif _faces(final) != _faces(undone[2]):
            self.corrections.keep_or_warn(roll_id, undone[1], undone[2], final)


def _faces(reading: Reading) -> list[tuple[str, int]]:
    """Return a reading's dice as sorted (kind, value) pairs."""
    return sorted((d.die, d.value) for d in reading.dice)


def _typed(record: dict[str, Any]) -> list[tuple[str, int]]:
    """Return the dice of a recorded roll (its JSON form) as (kind, face) pairs."""
    roll = record.get("roll")
    dice = roll.get("dice", []) if isinstance(roll, dict) else []
    return [(str(d["kind"]), int(d["face"])) for d in dice if isinstance(d, dict)]
