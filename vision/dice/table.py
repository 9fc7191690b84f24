"""The table's own dice: each with a name, a kind, pips or numerals, a colour and its photos.

A table plays with a handful of dice and teaches each one once. They live in a folder
(`dice/` beside the session's store, or inside a taught profile), one file a die, each
written aside and renamed into place so a kill never leaves half a die, and read as every
file the tower reads is: bounded, checked, refused in one line.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np
from numpy.lib.npyio import NpzFile
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from tidetower.engine.files import HostileFile, nesting, regular_file, sync_folder
from tidetower.vision.dice.matcher import SIDE
from tidetower.vision.kinds import KINDS, check_face

PROFILE_DICE = "dice"
"""The folder of a taught profile that holds its dice, each with its own reader."""
SUFFIX = ".die.npz"
VERSION = 1
MAX_DIE_BYTES = 64 << 20
"""A die of a thousand photos is about 30 MB compressed; a bigger file is no die of ours."""
MAX_PHOTOS = 2000
MAX_DICE = 64
"""More dice than any table plays with: a folder of more is refused, not read."""
FaceMarks = Literal["pips", "numerals"]
HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
"""The npy headers numpy writes a die's photos with: read alone, the photos stay packed."""


class DiceFileError(ValueError):
    """A die's file the tower will not read, or a name it will not take: one line, why."""


class DieMeta(BaseModel):
    """What a die's file says of it besides its photos."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = VERSION
    name: str = Field(min_length=1, max_length=40)
    kind: str
    marks: FaceMarks
    colour: tuple[float, float, float]
    """Its plastic's colour, BGR 0..255."""

    @field_validator("kind")
    @classmethod
    def _known(cls, kind: str) -> str:
        if kind not in KINDS:
            raise ValueError(f"{kind!r} is not a die kind: expected one of {', '.join(KINDS)}")
        return kind

    @field_validator("colour")
    @classmethod
    def _bgr(cls, colour: tuple[float, float, float]) -> tuple[float, float, float]:
        if not all(0 <= c <= 255 for c in colour):
            raise ValueError("a colour is three numbers 0..255")
        return colour


@dataclass(frozen=True)
class TableDie:
    """One of the table's dice: who it is, and the photos its own reader learns from."""

    meta: DieMeta
    crops: np.ndarray
    """(N, SIDE, SIDE, 3) uint8: the die as the reader cuts it, one photo a throw."""
    faces: tuple[int, ...]
    """The face each photo shows, as the GM confirmed it."""

    @property
    def name(self) -> str:
        """The name the table gave it ("white omen")."""
        return self.meta.name

    @property
    def kind(self) -> str:
        """Its kind ("d20")."""
        return self.meta.kind

    def taught(self) -> dict[int, int]:
        """Return how many photos each face has."""
        return face_counts(self.faces)

    def with_photos(self, crops: np.ndarray, faces: tuple[int, ...]) -> TableDie:
        """Return this die with more confirmed photos (a throw the GM confirmed or corrected)."""
        for face in faces:
            check_face(self.kind, face)
        kept = np.concatenate([self.crops, crops])[-MAX_PHOTOS:]
        return replace(self, crops=kept, faces=(self.faces + faces)[-MAX_PHOTOS:])


@dataclass(frozen=True)
class DieCard:
    """What a die's file says of it without its photos: enough to list it."""

    meta: DieMeta
    faces: tuple[int, ...]

    def taught(self) -> dict[int, int]:
        """Return how many photos each face has."""
        return face_counts(self.faces)


def face_counts(faces: tuple[int, ...]) -> dict[int, int]:
    """Return how many photos each face has."""
    counts: dict[int, int] = {}
    for face in faces:
        counts[face] = counts.get(face, 0) + 1
    return counts


def new_die(name: str, kind: str, marks: FaceMarks, colour: tuple[float, float, float]) -> TableDie:
    """Return a die with no photos yet, refusing a bad name or kind in one line."""
    try:
        meta = DieMeta(name=name, kind=kind, marks=marks, colour=colour)
    except ValidationError as error:
        raise DiceFileError(_first(error)) from None
    return TableDie(meta, np.zeros((0, SIDE, SIDE, 3), np.uint8), ())


def _first(error: ValidationError) -> str:
    """The first problem pydantic found, with its key: one line."""
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]


def slug(name: str) -> str:
    """Return a die's file stem from its name: "White Omen" -> "white-omen"."""
    stem = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return stem or "die"


def save_die(folder: Path, die: TableDie) -> Path:
    """Write a die into the folder atomically: aside, synced, then renamed into place."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f"{slug(die.name)}{SUFFIX}"
    fd, aside = tempfile.mkstemp(prefix=".", suffix=".part", dir=folder)
    try:
        with os.fdopen(fd, "wb") as file:
            np.savez_compressed(
                file,
                meta=np.array(die.meta.model_dump_json()),
                crops=die.crops.astype(np.uint8),
                faces=np.array(die.faces, np.int16),
            )
            file.flush()
            os.fsync(file.fileno())
        os.replace(aside, path)
    except BaseException:
        Path(aside).unlink(missing_ok=True)
        raise
    sync_folder(folder)
    return path


def load_die(path: Path) -> TableDie:
    """Read one die's file, refusing anything that is not one in one line naming it."""
    with _opened(path) as data:
        meta_text, crops, faces = (data[key] for key in ("meta", "crops", "faces"))
    card = _checked(path, meta_text, (crops.shape, crops.dtype), faces)
    return TableDie(card.meta, crops, card.faces)


def read_card(path: Path) -> DieCard:
    """Read one die's file as `load_die` does, its photos' shape checked but not unpacked."""
    with _opened(path) as data:
        meta_text, faces = data["meta"], data["faces"]
        with cast(zipfile.ZipFile, data.zip).open("crops.npy") as crops:
            version = np.lib.format.read_magic(crops)
            if version not in HEADERS:
                raise ValueError(f"crops.npy is in npy format {version}")
            shape, _, dtype = HEADERS[version](crops)
    return _checked(path, meta_text, (shape, dtype), faces)


@contextmanager
def _opened(path: Path) -> Iterator[NpzFile]:
    """A die's file opened as numpy's npz, anything that is not one refused in one line."""
    try:
        regular_file(path, MAX_DIE_BYTES)
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, NpzFile):  # a bare array: numpy reads it, a die it is not
            raise ValueError("not an npz archive")
        with loaded as data:
            yield data
    except HostileFile as error:
        raise DiceFileError(str(error)) from None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise DiceFileError(f"{path}: not a die's file ({str(error)[:80]})") from None


def _checked(
    path: Path,
    meta_text: np.ndarray,
    crops: tuple[tuple[int, ...], np.dtype[Any]],
    faces: np.ndarray,
) -> DieCard:
    """Return what a file's arrays say of its die, once each is what a die's file holds."""
    text = str(meta_text)[:4096] if meta_text.shape == () else ""
    if not text or nesting(text.encode()) > 2:
        raise DiceFileError(f"{path}: its description is not a die's")
    try:
        meta = DieMeta.model_validate(json.loads(text))
    except (ValueError, ValidationError) as error:
        raise DiceFileError(f"{path}: {str(error).splitlines()[0][:120]}") from None
    shape, dtype = crops
    if (
        dtype != np.uint8
        or len(shape) != 4
        or shape[1:] != (SIDE, SIDE, 3)
        or shape[0] > MAX_PHOTOS
    ):
        raise DiceFileError(f"{path}: its photos are not {SIDE}x{SIDE} colour crops")
    if faces.dtype.kind != "i" or faces.shape != (shape[0],):
        raise DiceFileError(f"{path}: it does not say one face per photo")
    try:
        for face in set(faces.tolist()):
            check_face(meta.kind, int(face))
    except ValueError as error:
        raise DiceFileError(f"{path}: {error}") from None
    return DieCard(meta, tuple(int(f) for f in faces))


def die_files(folder: Path) -> list[Path]:
    """Return the dice files in a folder, by name; a folder of too many is refused."""
    if not folder.is_dir():
        return []
    files = sorted(p for p in folder.iterdir() if p.name.endswith(SUFFIX))
    if len(files) > MAX_DICE:
        raise DiceFileError(f"{folder}: {len(files)} dice, more than the {MAX_DICE} a table has")
    return files


def folder_state(folder: Path) -> tuple[tuple[str, int, int], ...]:
    """Return each die file's name, mtime and size: what changes when a die does, cheaply."""
    return tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in die_files(folder))


def load_dice(folder: Path) -> tuple[TableDie, ...]:
    """Read every die in a folder; a bad file is refused in one line naming it."""
    return tuple(load_die(path) for path in die_files(folder))


def find_die(folder: Path, name: str) -> Path:
    """Return the file of the die so named (by its name or its file's stem)."""
    for path in die_files(folder):
        if path.name == f"{slug(name)}{SUFFIX}":
            return path
    raise DiceFileError(f"no die named {name!r} at this table")


def rename_die(folder: Path, old: str, new: str) -> TableDie:
    """Give a die a new name: written under the new name first, then the old file removed."""
    path = find_die(folder, old)
    if slug(new) != slug(old) and (folder / f"{slug(new)}{SUFFIX}").exists():
        raise DiceFileError(f"a die named {new!r} is at this table already")
    die = load_die(path)
    try:
        renamed = replace(die, meta=die.meta.model_copy(update={"name": new}))
        DieMeta.model_validate(renamed.meta.model_dump())
    except ValidationError as error:
        raise DiceFileError(_first(error)) from None
    written = save_die(folder, renamed)
    if written != path:
        path.unlink()
        sync_folder(folder)
    return renamed


def forget_die(folder: Path, name: str) -> None:
    """Remove a die from the table: its file and all its photos."""
    find_die(folder, name).unlink()
    sync_folder(folder)
