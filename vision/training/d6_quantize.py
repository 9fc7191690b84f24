"""Turn trained float d6 face readers into int8 ones: twice as fast on one CPU thread, same reads.

Usage: python -m tidetower.vision.training.d6_quantize MODEL.onnx [MODEL.onnx ...] [--synth N]
Each float .onnx is replaced by its int8 version (onnxruntime static quantization, QDQ,
weights per channel in 7 bits, so CPUs without VNNI cannot overflow), calibrated on the
photos it learned from: the folds its `trained_on` metadata names, plus the first N
synthetic training trays, so no held-out photo shapes it. `python -m
tidetower.vision.training.d6` does this to every face reader it writes; this command is for
nets trained in float. The shipped finder stays float
(run #10), though the script takes it too. Needs onnx and torch (training only). Measured
in docs/BENCHMARKS.md, runs #10 and #11.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from tidetower.vision.d6.nets import FACE_MARGIN, face_crop, learned_from, letterbox, to_blob
from tidetower.vision.score import FOLDS, RUNE55_LEARNED
from tidetower.vision.training import TRAIN_EXTRA, missing_training_tools
from tidetower.vision.training.d6_data import SYNTH_SEED, photo_sets, synth_photos
from tidetower.vision.training.d6_paste import Photo

CALIBRATION_SYNTH = 60
"""Synthetic trays calibrated on besides the real photos: the first of the training trays."""
CALIBRATION_REAL = 400
"""At most this many photos of each real set calibrate an int8 face reader (d6-tray's dev
split has fewer: all of it, as before d6-rune55 was learned from)."""
FLOOR_CROPS = 3
"""Crops of bare floor per photo: the face readers see candidates that are no die, too."""


def finder_inputs(photos: list[Photo], size: int) -> Iterator[np.ndarray]:
    """Yield each photo as the finder sees it: letterboxed into its square."""
    for image, *_ in photos:
        yield to_blob(letterbox(image, size)[0][None])


def face_inputs(photos: list[Photo], size: int, seed: int = 0) -> Iterator[np.ndarray]:
    """Yield a batch per photo: every labelled die at a random turn, and a few floor crops."""
    rng = np.random.default_rng(seed)
    for image, centres, sides, _ in photos:
        h, w = image.shape[:2]
        spots = [(x, y, s) for (x, y), s in zip(centres, sides, strict=True)]
        side = float(np.median(sides)) if len(sides) else 0.06 * max(h, w)
        spots += [(rng.uniform(0, w), rng.uniform(0, h), side) for _ in range(FLOOR_CROPS)]
        crops = [
            face_crop(image, float(x), float(y), float(s) * FACE_MARGIN, rng.uniform(0, 360), size)
            for x, y, s in spots
        ]
        yield to_blob(np.stack(crops))


def calibration_photos(real: list[list[Photo]]) -> list[Photo]:
    """Return the real photos an int8 face reader is calibrated on: of each set at most
    CALIBRATION_REAL, every few in order."""
    sampled = [photos[:: max(1, len(photos) // CALIBRATION_REAL)] for photos in real]
    return [photo for photos in sampled for photo in photos]


def is_quantized(path: Path) -> bool:
    """Return whether a model already holds int8 weights (QuantizeLinear nodes)."""
    import onnx

    return any(node.op_type == "QuantizeLinear" for node in onnx.load(str(path)).graph.node)


def quantize(path: Path, photos: list[Photo]) -> None:
    """Replace a float finder or face reader with its int8 version, calibrated on photos."""
    import onnx

    from tidetower.vision.training.int8 import int8

    model = onnx.load(str(path))
    size = model.graph.input[0].type.tensor_type.shape.dim[2].dim_value
    finder = path.name.startswith("d6_finder")
    int8(path, finder_inputs(photos, size) if finder else face_inputs(photos, size))


def main() -> None:
    """Quantize the named float nets, each on the photos it learned from."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("models", type=Path, nargs="+")
    parser.add_argument(
        "--synth", type=int, default=CALIBRATION_SYNTH, help="synthetic trays to calibrate on"
    )
    args = parser.parse_args()
    if missing := missing_training_tools():
        sys.exit(f"quantizing needs {', '.join(missing)}: {TRAIN_EXTRA}")
    synth = synth_photos(args.synth, SYNTH_SEED)
    for path in args.models:
        folds = learned_from(path)
        if folds is None:
            sys.exit(f"{path}: no trained_on metadata, so which photos it learned from is unknown")
        if is_quantized(path):
            sys.exit(f"{path}: already int8")
        held_out = [fold for fold in FOLDS if fold not in folds]
        sets = ["tray"] if set(FOLDS) - set(held_out) else []
        sets += ["rune55"] if set(RUNE55_LEARNED) & folds else []
        quantize(path, calibration_photos(photo_sets(sets, held_out)) + synth)
        print(
            f"{path}: int8, calibrated on folds {','.join(sorted(folds))} "
            f"and {args.synth} synthetic trays"
        )


if __name__ == "__main__":
    main()
