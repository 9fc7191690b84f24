"""Each roll's settled frame kept on disk, named by roll id, for disputes; oldest pruned.

The display page shows them (`tidetower display --snapshots DIR`): a roll's record and the
tower's attention carry the file name.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np


class Snapshots:
    """A bounded folder of JPEG snapshots, one per roll (and one per reading the GM is
    asked to finish)."""

    def __init__(self, folder: str | Path, keep: int = 500) -> None:
        self.folder = Path(folder)
        self.keep = keep
        self.folder.mkdir(parents=True, exist_ok=True)

    def path_for(self, name: str) -> Path:
        """Where the snapshot called `name` (a roll id) lives."""
        return self.folder / f"{name}.jpg"

    def keep_frame(self, name: str, frame: np.ndarray) -> str | None:
        """Write the frame as `<name>.jpg`, then prune the oldest beyond `keep`; returns the
        file name, or None when none is kept (keep 0, or the write failed)."""
        if self.keep == 0:
            return None
        path = self.path_for(name)
        if not cv2.imwrite(str(path), frame, [cv2.IMWRITE_JPEG_QUALITY, 85]):
            return None
        self._prune()
        return path.name

    def forget(self, name: str | None) -> None:
        """Remove a snapshot that no roll will own (a refused roll's)."""
        if name is not None:
            (self.folder / name).unlink(missing_ok=True)

    def _prune(self) -> None:
        """Remove the oldest beyond `keep`; a file that vanished meanwhile (another process
        pruning the same folder, a person tidying up) is simply gone already."""
        files = []
        for path in self.folder.glob("*.jpg"):
            try:
                files.append((path.stat().st_mtime_ns, path))
            except FileNotFoundError:
                continue
        files.sort()
        for _, old in files[: max(0, len(files) - self.keep)]:
            old.unlink(missing_ok=True)
