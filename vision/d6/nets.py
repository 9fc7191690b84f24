"""Run the two small shipped networks with cv2.dnn: the die finder and the face reader."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cv2
import numpy as np

MODELS = Path(__file__).resolve().parent
"""The shipped ONNX files sit beside this module, so package-data *.onnx ships them."""
FIND_SIZE = 256
"""Side of the square, letterboxed image the finder sees."""
FIND_STRIDE = 4
"""Finder output cells are this many input pixels apart."""
FACE_SIZE = 40
"""Side of the square die crop the face reader sees."""
FACE_MARGIN = 1.25
"""A face crop spans this many die boxes, so the whole die and a rim of floor show."""


@dataclass(frozen=True)
class Letterbox:
    """How a photo was scaled and padded into the finder's square: to map results back."""

    scale: float
    width: int
    height: int


def to_blob(images: np.ndarray) -> np.ndarray:
    """Turn (N, H, W, 3) uint8 BGR into the (N, 3, H, W) float input both nets were trained on."""
    x = images.astype(np.float32) * (1.0 / 64.0) - 2.0
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def letterbox(image: np.ndarray, size: int = FIND_SIZE) -> tuple[np.ndarray, Letterbox]:
    """Scale a photo so its longer side is `size`, pad the rest with mid grey."""
    h, w = image.shape[:2]
    scale = size / max(h, w)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    small = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA)
    out = np.full((size, size, 3), 128, np.uint8)
    out[:nh, :nw] = small
    return out, Letterbox(scale, w, h)


def face_crop(
    image: np.ndarray, cx: float, cy: float, side: float, angle: float = 0.0
) -> np.ndarray:
    """Cut a FACE_SIZE square around a die centre, `side` pixels across, rotated by `angle`."""
    scale = FACE_SIZE / max(side, 1.0)
    m = cv2.getRotationMatrix2D((cx, cy), angle, scale)
    m[0, 2] += FACE_SIZE / 2 - cx
    m[1, 2] += FACE_SIZE / 2 - cy
    return cv2.warpAffine(
        image, m, (FACE_SIZE, FACE_SIZE), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )


@cache
def _load(name: str) -> cv2.dnn.Net:
    """Load a shipped ONNX model once per process."""
    return cv2.dnn.readNetFromONNX(str(MODELS / name))


def run_finder(square: np.ndarray) -> np.ndarray:
    """Return the finder's (2, S, S) output: centre probability and die side (input fraction)."""
    net = _load("d6_finder.onnx")
    net.setInput(to_blob(square[None]))
    out = np.asarray(net.forward())[0]
    heat = 1.0 / (1.0 + np.exp(-out[0]))
    return np.stack([heat, out[1]])


def run_faces(crops: np.ndarray) -> np.ndarray:
    """Return (N, 7) class probabilities for die crops: 0 is not-a-die, 1..6 the face."""
    if len(crops) == 0:
        return np.zeros((0, 7), np.float32)
    net = _load("d6_faces.onnx")
    net.setInput(to_blob(crops))
    logits = np.asarray(net.forward(), dtype=np.float64)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return np.asarray(e / e.sum(axis=1, keepdims=True), np.float32)
