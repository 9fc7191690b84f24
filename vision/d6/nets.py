"""Run the small shipped networks with onnxruntime: the die finder and the face readers."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import cv2
import numpy as np
import onnxruntime as ort

MODELS = Path(__file__).resolve().parent
"""The shipped ONNX files sit beside this module, so package-data *.onnx ships them."""
FIND_STRIDE = 4
"""Finder output cells are this many input pixels apart."""
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


def letterbox(image: np.ndarray, size: int) -> tuple[np.ndarray, Letterbox]:
    """Scale a photo so its longer side is `size`, pad the rest with mid grey."""
    h, w = image.shape[:2]
    scale = size / max(h, w)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    small = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA)
    out = np.full((size, size, 3), 128, np.uint8)
    out[:nh, :nw] = small
    return out, Letterbox(scale, w, h)


def face_crop(
    image: np.ndarray, cx: float, cy: float, side: float, angle: float = 0.0, size: int = 0
) -> np.ndarray:
    """Cut a square the face reader sees around a die centre, `side` pixels across, turned."""
    size = size or face_size()
    scale = size / max(side, 1.0)
    m = cv2.getRotationMatrix2D((cx, cy), angle, scale)
    m[0, 2] += size / 2 - cx
    m[1, 2] += size / 2 - cy
    return cv2.warpAffine(
        image, m, (size, size), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )


@cache
def load_session(path: Path) -> ort.InferenceSession:
    """Load an ONNX model once per process, on one CPU thread: the tower reads serially."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def face_models() -> tuple[Path, ...]:
    """Return the face readers in the package: their answers are averaged (an ensemble)."""
    return _face_models_in(MODELS)


@cache
def _face_models_in(folder: Path) -> tuple[Path, ...]:
    """Return the d6_faces*.onnx files of a folder, looked up once per folder and process
    (the package's models do not change while the tower runs); they must agree on input."""
    found = tuple(sorted(folder.glob("d6_faces*.onnx")))
    if not found:
        raise FileNotFoundError(f"no d6_faces*.onnx in {folder}")
    shapes = {tuple(load_session(path).get_inputs()[0].shape[1:]) for path in found}
    if len(shapes) > 1:
        raise ValueError(f"face readers in {folder} expect different inputs: {sorted(shapes)}")
    return found


def learned_from(path: Path) -> frozenset[str] | None:
    """Return the folds of real photos a model says it was trained on (its `trained_on`
    metadata), or None when it does not say: so a benchmark never calls a seen photo unseen."""
    said = load_session(path).get_modelmeta().custom_metadata_map.get("trained_on")
    return None if said is None else frozenset(said.split(","))


def finder() -> Path:
    """Return the shipped d6 finder's model file."""
    return MODELS / "d6_finder.onnx"


def find_size(model: Path | None = None) -> int:
    """Return the side of the square, letterboxed image a finder (the d6 one by default) was
    trained on."""
    return int(load_session(model or finder()).get_inputs()[0].shape[2])


def face_size() -> int:
    """Return the side of the square crop the shipped face readers were trained on."""
    return int(load_session(face_models()[0]).get_inputs()[0].shape[2])


def logits_of(path: Path, blob: np.ndarray) -> np.ndarray:
    """Run one model on one input blob and return its first output."""
    net = load_session(path)
    return np.asarray(net.run(None, {net.get_inputs()[0].name: blob})[0])


def run_finder(square: np.ndarray, model: Path | None = None) -> np.ndarray:
    """Return a finder's (2, S, S) output: centre probability and die side (input fraction);
    the d6 finder's unless another model is given."""
    out = logits_of(model or finder(), to_blob(square[None]))[0]
    heat = 1.0 / (1.0 + np.exp(-out[0]))
    return np.stack([heat, out[1]])


def run_faces(crops: np.ndarray, readers: int = 0) -> np.ndarray:
    """Return (N, 7) class probabilities for die crops (0 is not-a-die, 1..6 the face),
    averaged over the first `readers` face readers (0: all of them)."""
    if len(crops) == 0:
        return np.zeros((0, 7), np.float32)
    blob = to_blob(crops)
    total = np.zeros((len(crops), 7), np.float64)
    models = face_models()
    if not 0 <= readers <= len(models):
        raise ValueError(f"asked for {readers} face readers; the package has {len(models)}")
    models = models[: readers or None]
    for path in models:
        total += reader_probabilities(path, blob)
    return np.asarray(total / len(models), np.float32)


def reader_probabilities(path: Path, blob: np.ndarray) -> np.ndarray:
    """Return one face reader's (N, 7) probabilities (softmax of its logits) for a blob."""
    logits = logits_of(path, blob).astype(np.float64)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return np.asarray(e / e.sum(axis=1, keepdims=True))
