"""Make a trained float net int8: onnxruntime static quantization, as every shipped reader is.

QDQ format, weights per channel in 7 bits (`reduce_range`), so that x86 CPUs without VNNI
cannot overflow; operator sets no node uses are dropped, so an older onnxruntime still loads
the net; the model's metadata is kept. Needs the `train` extra (onnx).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
from onnxruntime.quantization import (
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_static,
)
from onnxruntime.quantization.shape_inference import quant_pre_process


class Feed(CalibrationDataReader):  # type: ignore[misc]
    """Hand onnxruntime's calibrator one input blob at a time."""

    def __init__(self, blobs: Iterator[np.ndarray]) -> None:
        self.blobs = blobs

    def get_next(self) -> dict[str, np.ndarray] | None:
        """Return the next input, or None when the blobs are used up."""
        blob = next(self.blobs, None)
        return None if blob is None else {"x": blob}


def int8(path: Path, blobs: Iterator[np.ndarray]) -> None:
    """Replace the float net at `path` with its int8 version, calibrated on input blobs."""
    props = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
    with tempfile.TemporaryDirectory() as tmp:
        ready = Path(tmp) / path.name
        quant_pre_process(str(path), str(ready))
        quantize_static(
            str(ready),
            str(path),
            Feed(blobs),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            reduce_range=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
    model = onnx.load(str(path))
    used = {node.domain for node in model.graph.node}
    kept = [opset for opset in model.opset_import if opset.domain in used]
    del model.opset_import[:]
    model.opset_import.extend(kept)
    if props:
        onnx.helper.set_model_props(model, props)
    onnx.save(model, str(path))
