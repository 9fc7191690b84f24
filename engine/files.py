"""Files the tower reads are hostile until checked: regular files of bounded size, JSON of
bounded depth, and names taken from a file kept inside their folder.

A FIFO named as a config, a labels file nested 100,000 deep or a name like `../s.db` in
the corrections hung, crashed or deleted outside the folder (issue 26); every reader of
a file the tower did not just write itself goes through here.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator

MAX_TEXT_BYTES = 1 << 20
"""A config, a labels file or a password: far above any real one."""
MAX_DEPTH = 32
"""JSON or TOML nested deeper than this is no file the tower wrote or documents."""
MAX_PATH = 4096
"""The longest path the OS takes (Linux's PATH_MAX), in bytes."""
MAX_NAME = 255
"""The longest name of one folder or file in a path (NAME_MAX), in bytes."""
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')


class HostileFile(ValueError):
    """A file the tower will not read, and why, in one line naming it."""


def read_bounded(path: str | Path, limit: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; a pipe, a device, a folder or a
    bigger file is refused before it is read (a FIFO opened non-blocking never waits)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise HostileFile(f"{path}: {error.strerror}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        os.close(fd)
        raise HostileFile(_refusal(path, info, limit))
    with os.fdopen(fd, "rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:  # it grew while being read
        raise HostileFile(f"{path}: more than the {limit} bytes it may be")
    return data


def _refusal(path: str | Path, info: os.stat_result, limit: int) -> str:
    """Why a file is not read: not a regular file, or bigger than `limit`."""
    if not stat.S_ISREG(info.st_mode):
        return f"{path}: not a regular file (a folder, pipe or device)"
    return f"{path}: {info.st_size} bytes, more than the {limit} it may be"


def regular_file(path: str | Path, limit: int) -> Path:
    """`path`, once it is known to be a regular file of at most `limit` bytes (for a file a
    library opens itself: a TLS certificate, a model)."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise HostileFile(f"{path}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        raise HostileFile(_refusal(path, info, limit))
    return Path(path)


def regular_if_there(path: Path) -> None:
    """Refuse, as an OSError, a path that is there but no regular file (a FIFO named as a
    store would hang its reader); a path not there yet is for the caller to make."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        raise OSError("not a regular file (a folder, pipe or device)")


def bounded_path(path: Path) -> Path:
    """`path` if the OS can take it, else ValueError saying how long it is (a config value
    of 100,000 characters was an OSError traceback when first looked at)."""
    size = len(os.fsencode(path))
    if size > MAX_PATH:
        raise ValueError(f"a path of {size} bytes; the limit is {MAX_PATH}")
    longest = max((len(os.fsencode(part)) for part in path.parts), default=0)
    if longest > MAX_NAME:
        raise ValueError(f"a name of {longest} bytes in the path; the limit is {MAX_NAME}")
    return path


BoundedPath = Annotated[Path, AfterValidator(bounded_path)]
"""A path a config names, refused at validation (naming its key) if no OS could open it."""


def nesting(data: bytes) -> int:
    """How deep the brackets of JSON or TOML text nest, strings left out."""
    depth = deepest = 0
    for char in _STRINGS.sub(b'""', data):
        if char in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in b"]}":
            depth -= 1
    return deepest


def load_json(path: str | Path, limit: int = MAX_TEXT_BYTES) -> Any:
    """The JSON in a bounded regular file, refused in one line if deeper than MAX_DEPTH."""
    data = read_bounded(path, limit)
    if nesting(data) > MAX_DEPTH:
        raise HostileFile(f"{path}: nested more than {MAX_DEPTH} deep")
    try:
        return json.loads(data)
    except ValueError as error:
        raise HostileFile(f"{path}: not JSON ({error})") from None


def inside(folder: Path, name: object) -> Path:
    """`folder / name` for a plain file name taken from a file; anything that could reach
    outside the folder (a path, `..`, a NUL) is refused, naming it cut short."""
    plain = isinstance(name, str) and name not in ("", ".", "..")
    if not plain or any(c in str(name) for c in "/\\\0"):
        raise HostileFile(f"{str(name)[:80]!r} is not a file name inside {folder}")
    return folder / str(name)


def sync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename in it) to the disk, so it survives a power cut."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
