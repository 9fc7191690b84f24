"""numerals-taught, taught from its one photo a face, read again turned and relit.

`tidetower teach` learns the set from its own photos (one a face); each photo is then read
whole by `read_dice` with that profile after turning it about the die (37 and 200 degrees)
and changing its light (darker, brighter, warmer). This checks that a die's own reader
keeps its answer under what moves between throws of one die; it cannot check new poses
(one photo a face is all there is), which the rendered dice of `taught_dice.py` do.

    python bench/taught_turned.py PROFILE   (taught first: tidetower teach PROFILE --labels
        ../shared/data/numerals-taught/labels.json ../shared/data/numerals-taught/images/*)
"""

from __future__ import annotations

import sys
from pathlib import Path

import cv2
import numpy as np

from tidetower.vision.read import load_image, read_dice
from tidetower.vision.score import LABEL_KINDS
from tidetower.vision.settings import ReaderSettings

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "numerals-taught"
TURNS = (37.0, 200.0)
LIGHTS = {
    "darker": (0.7, (1, 1, 1)),
    "brighter": (1.25, (1, 1, 1)),
    "warmer": (1.0, (0.85, 1, 1.15)),
}


def turned(image: np.ndarray, box: list[float], angle: float) -> np.ndarray:
    """Return the photo turned by `angle` degrees about the die's centre."""
    h, w = image.shape[:2]
    centre = ((box[0] + box[2]) / 2 * w, (box[1] + box[3]) / 2 * h)
    turn = cv2.getRotationMatrix2D(centre, angle, 1.0)
    return np.asarray(cv2.warpAffine(image, turn, (w, h), borderMode=cv2.BORDER_REFLECT))


def relit(image: np.ndarray, gain: float, cast: tuple[float, float, float]) -> np.ndarray:
    """Return the photo under another light: brighter or darker, and with a colour cast."""
    lit = image.astype(np.float32) * gain * np.array(cast, np.float32)
    return np.clip(lit, 0, 255).astype(np.uint8)


def main() -> None:
    """Print right / wrong / unanswered over every photo, turn and light."""
    import json

    settings = ReaderSettings(profile=sys.argv[1])
    said = {"right": 0, "wrong": 0, "unanswered": 0}
    for entry in json.loads((DATA / "labels.json").read_text()):
        if not entry["dice"]:
            continue
        die = entry["dice"][0]
        kind, value = LABEL_KINDS.get(die["die"], die["die"]), int(die["value"])
        photo = load_image(DATA / "images" / Path(entry["file"]).name)
        for angle in TURNS:
            for gain, cast in LIGHTS.values():
                reading = read_dice(
                    relit(turned(photo, die["box"], angle), gain, cast), None, settings
                )
                got = [d for d in reading.dice if d.die == kind]
                outcome = "unanswered" if not got else "right" if got[0].value == value else "wrong"
                said[outcome] += 1
    n = sum(said.values())
    print(" ".join(f"{k} {100 * v / n:.1f} %" for k, v in said.items()), f"of {n} reads")


if __name__ == "__main__":
    main()
