"""Run the shipped numeral net with onnxruntime: class probabilities and an embedding per crop."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from tidetower.vision.d6.nets import load_session, to_blob
from tidetower.vision.kinds import face_values

MODEL = Path(__file__).resolve().parent / "numerals.onnx"
"""The shipped net sits beside this module, so package-data *.onnx ships it."""
NUMERAL_KINDS = ("d6", "d8", "d10", "d10-tens", "d12", "d20")
"""Kinds the net reads by their numerals (a d6 with numerals rather than pips among them)."""
CLASSES = ("none", "pips", *(f"{k}:{v}" for k in NUMERAL_KINDS for v in face_values(k)))
"""The net's classes: no die, a pip d6 (read by the d6 reader), and each kind's faces."""
MARGIN = 1.25
"""A crop spans this many finder die sides: the whole die and a rim of what is around it."""


@dataclass(frozen=True)
class NetOutput:
    """The net's verdict on a batch of crops: probabilities over CLASSES and unit embeddings."""

    probs: np.ndarray
    embeddings: np.ndarray


def crop_size(model: Path = MODEL) -> int:
    """Return the side of the square crop the net reads."""
    return int(load_session(model).get_inputs()[0].shape[2])


@cache
def model_id(model: Path = MODEL) -> str:
    """Return a short fingerprint of a net: a profile taught with one net is void for another."""
    return hashlib.sha256(model.read_bytes()).hexdigest()[:16]


@cache
def model_classes(model: Path = MODEL) -> tuple[str, ...]:
    """Return the classes a numeral model was trained on (its `classes` metadata)."""
    said = load_session(model).get_modelmeta().custom_metadata_map.get("classes")
    return CLASSES if said is None else tuple(json.loads(said))


def embedding_width(model: Path = MODEL) -> int:
    """Return how many numbers the net gives for each crop's embedding."""
    return int(load_session(model).get_outputs()[1].shape[1])


def run_numerals(crops: np.ndarray, model: Path = MODEL) -> NetOutput:
    """Return class probabilities and embeddings for (N, S, S, 3) uint8 BGR crops."""
    net = load_session(model)
    if len(crops) == 0:
        width = embedding_width(model)
        return NetOutput(
            np.zeros((0, len(model_classes(model))), np.float32), np.zeros((0, width), np.float32)
        )
    logits, embeddings = net.run(None, {net.get_inputs()[0].name: to_blob(crops)})
    z = np.asarray(logits, np.float64)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return NetOutput(
        np.asarray(e / e.sum(axis=1, keepdims=True), np.float32), np.asarray(embeddings, np.float32)
    )
