"""Training code for the shipped nets; needs the `train` extra (torch, onnx), never on the Pi."""

from __future__ import annotations

import importlib.util

TRAIN_EXTRA = "pip install 'tidetower[train]'"
"""What to install for training: torch and onnx."""


def missing_training_tools() -> list[str]:
    """Return the training packages that are not installed."""
    return [name for name in ("torch", "onnx") if importlib.util.find_spec(name) is None]
