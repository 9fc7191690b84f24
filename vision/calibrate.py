"""Calibration of the empty tray: a background frame, the tray region, the exposure used."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from tidetower.engine.files import HostileFile, load_json
from tidetower.vision.pictures import ImageError, load_image
from tidetower.vision.settings import Calibration
from tidetower.vision.sources import FrameSource

BACKGROUND = "background.png"
META = "calibration.json"


class CalibrationError(ValueError):
    """The calibration folder is missing or broken; the message says which file."""


def capture_background(source: FrameSource, frames: int = 9) -> np.ndarray:
    """The empty tray as the per-pixel median of several frames: noise and flicker removed."""
    stack = np.stack([source.read(timeout=5.0) for _ in range(frames)])
    return np.asarray(np.median(stack, axis=0), dtype=np.uint8)


def find_tray(background: np.ndarray) -> tuple[float, float, float, float]:
    """The tray floor: the largest even-coloured region touching the image centre."""
    h, w = background.shape[:2]
    small = cv2.resize(background, (160, max(1, round(160 * h / w))), interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(cv2.GaussianBlur(small, (5, 5), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
    sh, sw = lab.shape[:2]
    centre = np.median(lab[sh // 3 : 2 * sh // 3, sw // 3 : 2 * sw // 3].reshape(-1, 3), axis=0)
    floor = (np.linalg.norm(lab - centre, axis=2) < 18).astype(np.uint8)
    count, _labels, stats, _ = cv2.connectedComponentsWithStats(floor)
    if count < 2:
        return (0.0, 0.0, 1.0, 1.0)
    biggest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    x, y, bw, bh = stats[biggest, :4]
    return (float(x / sw), float(y / sh), float((x + bw) / sw), float((y + bh) / sh))


def save_calibration(
    folder: str | Path,
    background: np.ndarray,
    tray: tuple[float, float, float, float],
    exposure: dict[str, Any] | None = None,
) -> Path:
    """Store the background, the tray region and the exposure settings; returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(folder / BACKGROUND), background)
    meta = {
        "version": 1,
        "tray": list(tray),
        "size": list(background.shape[1::-1]),
        "exposure": exposure or {},
    }
    (folder / META).write_text(json.dumps(meta, indent=2, default=str), encoding="utf-8")
    return folder


def load_calibration(folder: str | Path) -> Calibration:
    """The stored calibration, or CalibrationError naming what is missing or broken."""
    folder = Path(folder)
    try:
        meta = load_json(folder / META)
    except HostileFile as error:
        raise CalibrationError(f"cannot read {error}") from None
    try:
        background = load_image(folder / BACKGROUND)
    except ImageError as error:
        raise CalibrationError(f"cannot read {error}: run `tidetower calibrate`") from None
    tray = meta.get("tray")
    return Calibration(background=background, tray=tuple(tray) if tray else None)


def from_empty_tray(photo: str | Path) -> Calibration:
    """The calibration `tidetower calibrate` would store from this empty-tray photo: it as
    the background and the tray floor found in it, so dice on the table around are ignored."""
    try:
        background = load_image(photo)
    except ImageError as error:
        raise CalibrationError(f"the empty tray: {error}") from None
    return Calibration(background=background, tray=find_tray(background))


def exposure_of(calibration_folder: str | Path) -> dict[str, Any]:
    """The exposure settings stored with a calibration, to lock the camera to them."""
    meta = json.loads((Path(calibration_folder) / META).read_text(encoding="utf-8"))
    return dict(meta.get("exposure", {}))


def annotate_tray(background: np.ndarray, tray: tuple[float, float, float, float]) -> np.ndarray:
    """The empty tray with the found region outlined, for a person to check."""
    image = background.copy()
    h, w = image.shape[:2]
    x0, y0, x1, y1 = (round(v) for v in (tray[0] * w, tray[1] * h, tray[2] * w, tray[3] * h))
    cv2.rectangle(image, (x0, y0), (x1 - 1, y1 - 1), (0, 200, 255), 3)
    cv2.putText(
        image,
        "tray",
        (x0 + 8, y0 + 28),
        cv2.FONT_HERSHEY_SIMPLEX,
        0.9,
        (0, 200, 255),
        2,
        cv2.LINE_AA,
    )
    return image
