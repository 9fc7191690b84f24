"""A table's taught dice: the numeral net's embeddings of each face, compared by cosine.

Any kind can be taught, d4 included, which the shipped net cannot read by itself.

A profile is a folder: `profile.json` (what was taught, and from how many photos) and
`examples.npz` (one unit embedding per taught view, and its class). A die the reader finds
is taken as a taught face only when its embedding is close to that face's views and
clearly closer than to any other face's; otherwise the shipped net's verdict stands, so a
profile adds to the reader and never replaces it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from zipfile import BadZipFile

import numpy as np

from tidetower.engine.files import HostileFile, load_json, regular_file
from tidetower.vision.kinds import check_face
from tidetower.vision.numerals.nets import embedding_width, model_id
from tidetower.vision.numerals.signatures import TaughtFaces, load_faces

log = logging.getLogger(__name__)
META = "profile.json"
EXAMPLES = "examples.npz"
VERSION = 1
_UNREADABLE = (OSError, ValueError, KeyError, EOFError, TypeError, BadZipFile)
"""What reading a damaged or hostile profile raises (HostileFile is a ValueError; an .npy
where an .npz belongs is no context manager, a TypeError)."""
MAX_EXAMPLES_BYTES = 64 << 20
"""examples.npz of thousands of taught views is a few MB: a bigger one is no profile."""


class ProfileError(ValueError):
    """A profile folder that is missing, broken, or made for another net."""


@dataclass(frozen=True)
class Match:
    """The taught class nearest a die, how near, and how far ahead of the next class."""

    label: str
    similarity: float
    lead: float


@dataclass(frozen=True)
class Profile:
    """Taught views: unit embeddings (N, E) and the class of each, plus what was taught."""

    embeddings: np.ndarray
    labels: tuple[str, ...]
    names: dict[str, str]
    """Kind ("d20") -> the name the table gave its die ("white omen")."""
    similar: float = 0.97
    """A die is a taught face only when its embedding is at least this close (cosine)."""
    lead: float = 0.02
    """... and this much closer to it than to any other taught face."""
    faces: TaughtFaces = field(default_factory=TaughtFaces)
    """The recogniser's signature of each taught numeral face (`signatures`)."""

    def match(self, embeddings: np.ndarray) -> list[Match | None]:
        """Return the taught face each embedding is close to and clearly nearest, or None."""
        if len(self.labels) == 0 or len(embeddings) == 0:
            return [None] * len(embeddings)
        sims = embeddings @ self.embeddings.T
        labels = np.array(self.labels)
        out: list[Match | None] = []
        for row in sims:
            best = int(np.argmax(row))
            label = str(labels[best])
            other = row[labels != label]
            runner = float(other.max()) if other.size else -1.0
            ok = row[best] >= self.similar and row[best] - runner >= self.lead
            out.append(Match(label, float(row[best]), float(row[best]) - runner) if ok else None)
        return out

    def taught(self) -> dict[str, int]:
        """Return how many views were taught per class."""
        counts: dict[str, int] = {}
        for label in self.labels:
            counts[label] = counts.get(label, 0) + 1
        return counts

    def save(self, folder: Path, photos: int) -> None:
        """Write the profile into a folder (made if needed)."""
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(
            folder / EXAMPLES,
            embeddings=self.embeddings.astype(np.float32),
            labels=np.array(self.labels),
        )
        self.faces.save(folder)
        meta = {
            "version": VERSION,
            "net": model_id(),
            "photos": photos,
            "similar": self.similar,
            "lead": self.lead,
            "names": self.names,
            "taught": self.taught(),
        }
        (folder / META).write_text(json.dumps(meta, indent=2), encoding="utf-8")

    def extended(
        self,
        embeddings: np.ndarray,
        labels: list[str],
        names: dict[str, str],
        faces: TaughtFaces | None = None,
    ) -> Profile:
        """Return this profile with more taught views (and the taught faces' signatures)."""
        return Profile(
            np.concatenate([self.embeddings, embeddings]),
            self.labels + tuple(labels),
            {**self.names, **names},
            self.similar,
            self.lead,
            faces if faces is not None else self.faces,
        )


def empty_profile(width: int) -> Profile:
    """Return a profile with nothing taught yet."""
    return Profile(np.zeros((0, width), np.float32), (), {})


def previous_of(profile: Path) -> Path:
    """Where the profile a learning replaced is kept, to go back to."""
    return profile.with_name(profile.name + ".previous")


def load_profile(folder: str | Path, fallback: bool = True) -> Profile:
    """Read a profile folder (again when it was taught since); a damaged one is reported
    once and its previous read instead, if it has one and `fallback`; else ProfileError
    naming what is wrong with it."""
    try:
        return _load_one(Path(folder))
    except ProfileError as error:
        previous = previous_of(Path(folder))
        if not fallback or not previous.exists():
            raise
        profile = _load_one(previous)
        _report(f"{error}; reading with the previous profile, {previous}")
        return profile


@cache
def _report(problem: str) -> None:
    """Say once what is wrong with a profile (it is loaded again for every roll)."""
    log.warning("%s", problem)


def _load_one(folder: Path) -> Profile:
    """Read one profile folder, or ProfileError."""
    path = folder.resolve()
    try:
        stamp = (path / EXAMPLES).stat().st_mtime_ns
    except OSError as error:
        raise ProfileError(f"no profile in {path}: {error.strerror or error}") from None
    return _load(path, stamp)


@cache
def _load(folder: Path, stamp: int) -> Profile:
    """Read a profile once per version of its files (`stamp`)."""
    try:
        meta = load_json(folder / META)
        with np.load(regular_file(folder / EXAMPLES, MAX_EXAMPLES_BYTES)) as data:
            embeddings, labels = np.asarray(data["embeddings"]), np.asarray(data["labels"])
    except _UNREADABLE as error:
        raise ProfileError(f"cannot read the profile in {folder}: {_short(error)}") from None
    if (
        not isinstance(meta, dict)
        or meta.get("version") != VERSION
        or meta.get("net") != model_id()
    ):
        raise ProfileError(f"{folder} was taught with another numeral net: teach it again")
    _check_shapes(folder, embeddings, labels)
    for label in set(labels.tolist()):
        kind, _, value = str(label).partition(":")
        try:
            check_face(kind, int(value))
        except ValueError as error:
            raise ProfileError(f"{folder} holds a face no die has ({label}): {error}") from None
    return Profile(
        np.asarray(embeddings, np.float32),
        tuple(str(x) for x in labels),
        dict(meta.get("names", {})),
        float(meta["similar"]),
        float(meta["lead"]),
        _faces(folder),
    )


def _short(error: BaseException) -> str:
    """An error's own words in one line of bounded length."""
    said = str(error) if isinstance(error, HostileFile) else f"{type(error).__name__}: {error}"
    return " ".join(said.split())[:200]


def _check_shapes(folder: Path, embeddings: np.ndarray, labels: np.ndarray) -> None:
    """One embedding of the net's width per label, or ProfileError saying what does not fit."""
    width = embedding_width()
    if embeddings.ndim != 2 or embeddings.shape[1:] != (width,) or labels.ndim != 1:
        raise ProfileError(
            f"{folder}: its embeddings are {embeddings.shape}, the numeral net gives {width}"
        )
    if len(labels) != len(embeddings) or embeddings.dtype.kind != "f":
        raise ProfileError(f"{folder}: {len(labels)} labels for {len(embeddings)} embeddings")


def _faces(folder: Path) -> TaughtFaces:
    """Read a profile's taught signatures, or ProfileError naming what is wrong with them."""
    try:
        return load_faces(folder)
    except _UNREADABLE as error:
        raise ProfileError(f"cannot read the taught faces in {folder}: {_short(error)}") from None
