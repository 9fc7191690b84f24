"""Taught profiles swapped so that a kill at any instant leaves a complete profile and the
one before it.

Each version is written aside in `<profile>.versions/<n>` and synced before anything points
at it; `<profile>` and `<profile>.previous` are links to versions, each switched by one
rename. A disk that fills while a version is written leaves the links as they were; a kill
between two renames leaves both links on complete versions, and `recover` ties up what a
kill left. Readers follow the links and never see half a profile.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from tidetower.engine.files import sync_folder
from tidetower.vision.numerals.profile import (
    ProfileError,
    empty_profile,
    load_profile,
    previous_of,
)
from tidetower.vision.numerals.teach import TeachError

log = logging.getLogger(__name__)

KEPT = 4
"""Versions kept besides the two linked: a kill between a rollback's two renames loses none."""
WORK = "learn-"
"""The prefix of a learning's working folder inside the versions folder."""


def versions_of(profile: Path) -> Path:
    """Where a profile's versions are kept, beside it (one filesystem: renames are atomic)."""
    return profile.with_name(profile.name + ".versions")


def work_folder(profile: Path) -> Path:
    """A fresh folder for one learning's candidate, beside the versions; what an earlier
    learning that was killed left there is removed first."""
    versions = versions_of(profile)
    versions.mkdir(parents=True, exist_ok=True)
    for stale in versions.glob(f"{WORK}*"):
        shutil.rmtree(stale, ignore_errors=True)
    folder = versions / f"{WORK}{os.getpid()}"
    folder.mkdir()
    return folder


def adopt(candidate: Path, profile: Path) -> None:
    """Make the candidate the profile; the one it replaces (an empty one if there was none:
    it reads as no profile) becomes `profile.previous`."""
    recover(profile)
    current = linked(profile)
    if current is None:
        current = _written(profile, lambda into: empty_profile(_width(candidate)).save(into, 0))
    new = _written(profile, lambda into: shutil.copytree(candidate, into))
    _link(current, previous_of(profile))
    _link(new, profile)
    _prune(profile)


def rollback(profile: Path) -> None:
    """Put the previous profile back; the current one becomes the previous (twice: redo)."""
    recover(profile)
    current, previous = linked(profile), linked(previous_of(profile))
    if previous is None or current is None:
        raise TeachError(f"no previous profile to go back to ({previous_of(profile)})")
    _link(previous, profile)
    _link(current, previous_of(profile))


def readable(profile: Path) -> Path | None:
    """The profile a learning builds on: the profile, else its previous when the profile is
    damaged; None when there is neither; ProfileError when both are damaged."""
    folders = [f for f in (profile, previous_of(profile)) if f.exists()]
    for folder in folders:
        try:
            load_profile(folder, fallback=False)
        except ProfileError as error:
            problem = error
            continue
        return folder
    if folders:
        raise problem
    return None


def linked(link: Path) -> Path | None:
    """The complete version a profile link points at, or None."""
    if not link.is_symlink() or not link.resolve().is_dir():
        return None
    return link.resolve()


def recover(profile: Path) -> None:
    """Tie up what a kill or an older tower left: a profile that is a plain folder becomes a
    version, a link that is missing or broken points at the newest complete version."""
    versions = versions_of(profile)
    versions.mkdir(parents=True, exist_ok=True)
    for link in (profile, previous_of(profile)):
        if link.is_dir() and not link.is_symlink():  # taught in place, or before versions
            link.rename(_next(versions))
        elif (link.exists() or link.is_symlink()) and linked(link) is None:
            link.unlink()  # a plain file, or a link to nothing
    for link in (profile, previous_of(profile)):
        newest = _complete(versions) or _numbered(versions)  # a damaged one is said, not hidden
        if linked(link) is None and newest:
            _link(newest[-1], link)


def _written(profile: Path, write: Callable[[Path], object]) -> Path:
    """A new complete version: written under a temporary name, synced, then renamed."""
    versions = versions_of(profile)
    final = _next(versions)
    part = final.with_name(final.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    write(part)
    _sync(part)
    part.rename(final)
    sync_folder(versions)
    return final


def _next(versions: Path) -> Path:
    """The folder for the next version: one past the highest number used."""
    numbers = [int(p.name) for p in versions.iterdir() if p.name.isdigit()]
    return versions / str(max(numbers, default=0) + 1)


def _numbered(versions: Path) -> list[Path]:
    """The versions, oldest first."""
    return sorted((p for p in versions.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))


def _complete(versions: Path) -> list[Path]:
    """The versions whose profile reads, oldest first."""
    return [p for p in _numbered(versions) if _reads(p)]


def _reads(version: Path) -> bool:
    """True when a version is a profile the reader can load."""
    try:
        load_profile(version)
    except ValueError:
        return False
    return True


def _width(candidate: Path) -> int:
    """The embedding width of a candidate profile."""
    return int(load_profile(candidate).embeddings.shape[1])


def _link(version: Path, link: Path) -> None:
    """Point `link` at `version` with one rename (a relative link: the folder may move)."""
    temporary = link.with_name(link.name + ".link")
    temporary.unlink(missing_ok=True)
    os.symlink(os.path.relpath(version, link.parent), temporary)
    os.replace(temporary, link)
    sync_folder(link.parent)


def _prune(profile: Path) -> None:
    """Remove versions beyond the KEPT newest that neither link points at."""
    versions = versions_of(profile)
    keep = {linked(profile), linked(previous_of(profile))}
    numbered = sorted(
        (p for p in versions.iterdir() if p.name.isdigit()), key=lambda p: int(p.name)
    )
    for old in numbered[:-KEPT]:
        if old.resolve() not in keep:
            shutil.rmtree(old, ignore_errors=True)


def _sync(folder: Path) -> None:
    """Flush every file of a folder, then the folder, to the disk."""
    for path in folder.rglob("*"):
        if path.is_file():
            with open(path, "rb") as file:
                os.fsync(file.fileno())
    sync_folder(folder)
