"""The GM's corrections kept as labelled examples: each frame the tower could not finish
reading, with the faces that counted in the end, in the labels format `tidetower teach` reads.

`tidetower teach PROFILE --labels FOLDER/labels.json FOLDER/*.png` learns from them.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from tidetower.vision.reading import Reading

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
        """Return the labels kept so far (an unreadable file counts as none, and says so)."""
        try:
            raw = json.loads(self.labels_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            log.warning("corrections: %s unreadable (%s); starting it afresh", LABELS, error)
            return {}
        return raw if isinstance(raw, dict) else {}

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

    def _pruned(self, labels: dict[str, Any]) -> dict[str, Any]:
        """Drop the oldest examples beyond `keep` (labels keep their order of arrival)."""
        names = list(labels)
        dropped = names[: max(0, len(names) - self.keep)]
        for name in dropped:
            (self.folder / name).unlink(missing_ok=True)
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
