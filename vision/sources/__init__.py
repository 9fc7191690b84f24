"""Frame sources: one interface, one module per camera (picamera2, webcam, replay, simulated)."""

from __future__ import annotations

from tidetower.vision.sources.base import (
    FrameSource,
    FrameSourceError,
    FrameTimeout,
    SourceExhausted,
    ThreadedSource,
)

__all__ = ["FrameSource", "FrameSourceError", "FrameTimeout", "SourceExhausted", "ThreadedSource"]
