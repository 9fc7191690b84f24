"""Synthetic tray photos with exact labels, so the reader can be tested without hardware."""

from __future__ import annotations

from tidetower.vision.synth.faces import FACE_PAINTERS
from tidetower.vision.synth.noise import NOISE_KINDS, noise_picture
from tidetower.vision.synth.render import EVERY_KIND, SynthDie, SynthTray, TraySpec, render_tray

__all__ = [
    "EVERY_KIND",
    "FACE_PAINTERS",
    "NOISE_KINDS",
    "SynthDie",
    "SynthTray",
    "TraySpec",
    "noise_picture",
    "render_tray",
]
