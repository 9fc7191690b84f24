"""The frame sources a config may name: one line each, and `[camera]` is the union of their
config models, told apart by `source` (each model refuses the others' keys)."""

from __future__ import annotations

from typing import Annotated, get_args

from pydantic import Field

from tidetower.vision.sources.pi_camera import PiCameraConfig
from tidetower.vision.sources.replay import ReplayConfig
from tidetower.vision.sources.simulated import SimulatedConfig
from tidetower.vision.sources.webcam import WebcamConfig

CameraConfig = Annotated[
    PiCameraConfig | WebcamConfig | ReplayConfig | SimulatedConfig,
    Field(discriminator="source"),
]
"""`[camera]`: the config model of the source it names."""

SOURCES: tuple[str, ...] = tuple(
    get_args(model.model_fields["source"].annotation)[0]
    for model in get_args(get_args(CameraConfig)[0])
)
"""The `source` names, as `[camera] source` takes them."""
