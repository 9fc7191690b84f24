"""Tell a die's kind from its shape: the kind net, learned from real photos of many makers' dice."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np

from tidetower.vision.d6.nets import face_crop, load_session, to_blob

KIND_MODEL = Path(__file__).resolve().parent / "kinds.onnx"
"""The shipped kind net sits beside this module (package-data *.onnx ships it)."""
KIND_CLASSES = ("none", "pips", "d4", "d6", "d8", "d10", "d12", "d20")
"""No die, a pip d6, and each numeral kind by its shape; a d10's units or tens are told by
what it prints (the recogniser), not by its shape."""
SIZE = 48
"""Side of the square crop the kind net reads."""
MARGIN = 1.25
"""A crop spans this many finder die sides: the whole die and a rim of what is around it."""
TURNS = (0.0, 90.0, 180.0, 270.0)
"""The kind net reads each die at these turns, averaged."""


def cut(image: np.ndarray, x: float, y: float, side: float, turn: float = 0.0) -> np.ndarray:
    """Cut the crop the kind net reads around a die, from the image at its own resolution."""
    return face_crop(image, x, y, side * MARGIN, turn, SIZE)


@cache
def kind_classes(model: Path = KIND_MODEL) -> tuple[str, ...]:
    """Return the classes a kind net was trained on (its `classes` metadata)."""
    said = load_session(model).get_modelmeta().custom_metadata_map.get("classes")
    return KIND_CLASSES if said is None else tuple(json.loads(said))


def kind_probs(crops: np.ndarray, model: Path = KIND_MODEL) -> np.ndarray:
    """Return (N, classes) probabilities for (N, SIZE, SIZE, 3) uint8 BGR crops."""
    if len(crops) == 0:
        return np.zeros((0, len(kind_classes(model))), np.float32)
    net = load_session(model)
    (logits,) = net.run(None, {net.get_inputs()[0].name: to_blob(crops)})
    z = np.asarray(logits, np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return np.asarray(e / e.sum(axis=1, keepdims=True), np.float32)


def read_kinds(
    image: np.ndarray, dice: list[tuple[float, float, float]], model: Path = KIND_MODEL
) -> np.ndarray:
    """Return each die's kind probabilities, (x, y, side) in the image's own pixels."""
    crops = [cut(image, x, y, s, t) for x, y, s in dice for t in TURNS]
    if not crops:
        return kind_probs(np.zeros((0, SIZE, SIZE, 3), np.uint8), model)
    probs = kind_probs(np.stack(crops), model)
    return np.asarray(probs.reshape(len(dice), len(TURNS), -1).mean(axis=1))
