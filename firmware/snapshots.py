"""Each roll's settled frame kept on disk, named by roll id, for disputes; oldest pruned."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np


class Snapshots:
    """A bounded folder of JPEG snapshots, one per roll."""

    def __init__(self, folder: str | Path, keep: int = 500) -> None:
        self.folder = Path(folder)
        self.keep = keep
        self.folder.mkdir(parents=True, exist_ok=True)

    def path_for(self, roll_id: str) -> Path:
        """Where the snapshot of `roll_id` lives."""
        return self.folder / f"{roll_id}.jpg"

    def keep_frame(self, roll_id: str, frame: np.ndarray) -> None:
        """Write the frame of `roll_id`, then prune the oldest beyond `keep`."""
        if self.keep == 0:
            return
        cv2.imwrite(str(self.path_for(roll_id)), frame, [cv2.IMWRITE_JPEG_QUALITY, 85])
        self._prune()

    def _prune(self) -> None:
        files = sorted(self.folder.glob("*.jpg"), key=lambda p: p.stat().st_mtime_ns)
        for old in files[: max(0, len(files) - self.keep)]:
            old.unlink(missing_ok=True)
