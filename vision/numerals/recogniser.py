"""The pretrained text recogniser that reads a die's numerals: PP-OCR's, from the rapidocr wheel.

Nothing of the model is copied here: it is loaded from the installed package's files, and a
missing one is a start-up error naming the package to install.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

from tidetower.vision.d6.nets import load_session

PACKAGE = "rapidocr"
MODEL_NAME = "PP-OCRv6_rec_small.onnx"
"""PaddleOCR's small recognition model (Apache-2.0), shipped inside the rapidocr wheel."""
HEIGHT = 48
"""The recogniser reads lines of text this many pixels tall."""


class RecogniserMissing(RuntimeError):
    """The text recogniser's model is not installed: the reader cannot read numerals."""


def model_path() -> Path:
    """Return the recogniser's model inside the installed rapidocr wheel, or say what is missing."""
    fix = f"install it with: pip install '{PACKAGE}>=3.10'"
    try:
        root = resources.files(PACKAGE)
    except ModuleNotFoundError as err:
        raise RecogniserMissing(
            f"the numeral recogniser needs the {PACKAGE} package: {fix}"
        ) from err
    path = Path(str(root)) / "models" / MODEL_NAME
    if not path.is_file():
        raise RecogniserMissing(f"{PACKAGE} has no models/{MODEL_NAME} ({path}): {fix}")
    return path


@cache
def charset() -> tuple[str, ...]:
    """Return the recogniser's output symbols, CTC blank first and space last (PP-OCR's)."""
    said = load_session(model_path()).get_modelmeta().custom_metadata_map["character"]
    return ("", *said.splitlines(), " ")


@cache
def symbol(char: str) -> int:
    """Return the output index of one character."""
    return charset().index(char)


@dataclass(frozen=True)
class Strips:
    """The recogniser's per-step log-probabilities for a batch of lines, only the symbols
    the dice need kept: column 0 is the CTC blank, then `SYMBOLS` in order."""

    logp: np.ndarray
    """(lines, steps, 1 + len(SYMBOLS)) natural log-probabilities."""


SYMBOLS = "0123456789._"
"""What a die's face can print: digits, and the dot or bar under a 6 or a 9."""


@cache
def _columns() -> np.ndarray:
    """Return the output columns kept: the blank and each of SYMBOLS."""
    return np.asarray([0, *(symbol(c) for c in SYMBOLS)], np.int64)


def to_lines(crops: np.ndarray) -> np.ndarray:
    """Return (N, 3, 48, W) float input for (N, 48, W, 3) uint8 BGR crops, as PP-OCR expects."""
    x = crops.astype(np.float32).transpose(0, 3, 1, 2) / 127.5 - 1.0
    return np.ascontiguousarray(x)


def recognise(crops: np.ndarray) -> Strips:
    """Run the recogniser on (N, 48, W, 3) uint8 BGR crops; keep the digits' log-probabilities."""
    net = load_session(model_path())
    (probs,) = net.run(None, {net.get_inputs()[0].name: to_lines(crops)})
    kept = np.asarray(probs, np.float64)[:, :, _columns()]
    return Strips(np.log(np.maximum(kept, 1e-12)))


def text_log_likelihood(logp: np.ndarray, text: str) -> np.ndarray:
    """Return log P(text) under CTC for each line of (lines, steps, symbols) log-probabilities."""
    path = [0]
    for char in text:
        path += [1 + SYMBOLS.index(char), 0]
    labels = np.asarray(path)
    can_skip = np.zeros(len(path), bool)
    can_skip[2:] = (labels[2:] != 0) & (labels[2:] != labels[:-2])
    alpha = np.full((logp.shape[0], len(path)), -np.inf)
    alpha[:, :2] = logp[:, 0, labels[:2]]
    for t in range(1, logp.shape[1]):
        alpha = _step(alpha, can_skip) + logp[:, t, labels]
    return np.asarray(np.logaddexp(alpha[:, -1], alpha[:, -2]))


def _step(alpha: np.ndarray, can_skip: np.ndarray) -> np.ndarray:
    """Advance the CTC forward variables one step (before this step's emissions)."""
    none = np.full((alpha.shape[0], 1), -np.inf)
    moved = np.concatenate([none, alpha[:, :-1]], axis=1)
    skip = np.concatenate([none, none, alpha[:, :-2]], axis=1)
    total = np.logaddexp(alpha, moved)
    return np.asarray(np.where(can_skip, np.logaddexp(total, skip), total))
