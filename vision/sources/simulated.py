"""A simulated camera over a simulated tray: dice fall in, bounce, settle; hands clear them."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal

import cv2
import numpy as np

from tidetower.vision.sources.base import FrameSource, FrameSourceError, SourceConfig
from tidetower.vision.synth import SynthDie, TraySpec, render_tray
from tidetower.vision.synth.numerals import NumeralLook

SKIN = (120, 160, 215)  # BGR


@dataclass(frozen=True)
class SimSettings:
    """How the simulated tray looks and how long each part of a throw lasts, in frames."""

    size: tuple[int, int] = (640, 480)
    fps: float = 10.0
    dice: tuple[int, int] = (1, 6)
    fall_frames: int = 6
    hand_frames: int = 4
    noise: float = 2.0
    look: NumeralLook | None = None
    """One make for every numeral die thrown (a table's own set), instead of one per throw."""
    looks: tuple[tuple[str, NumeralLook], ...] = ()
    """The table's own dice: the make of each kind thrown (kind, look), over `look`."""
    side: tuple[float, float] = TraySpec.side
    """A die's side as a share of the picture's longer side (the renderer's by default)."""
    lean: tuple[float, float] = TraySpec.lean
    """How much of its sides a die at the picture's edge shows (the camera's height)."""


class SimulatedSource(FrameSource):
    """Frames of a tray that a script fills: `throw()` dice in, `reach_in()` to take them out."""

    def __init__(self, seed: int = 0, settings: SimSettings | None = None) -> None:
        self.settings = settings or SimSettings()
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        self.empty = render_tray(seed, self._spec((0, 0)), floor_seed=seed).image
        self.scene = self.empty
        self.dice: tuple[SynthDie, ...] = ()
        self.frame_index = 0
        self.throws = 0
        self.on_drop: Callable[[bool], None] | None = None
        self._script: deque[Callable[[], np.ndarray]] = deque()
        self._noise = [
            self._rng.normal(0, self.settings.noise, self.empty.shape).astype(np.int16)
            for _ in range(4)
        ]
        self.failing: str | None = None  # set to make read() fail, as a broken camera would

    def _spec(self, count: tuple[int, int]) -> TraySpec:
        settings = self.settings
        return TraySpec(
            size=settings.size,
            count=count,
            side=settings.side,
            lean=settings.lean,
            blur=0.0,
            noise=0.0,
            look=settings.look,
        )

    def clock(self) -> float:
        """Simulated seconds: frames seen divided by the frame rate."""
        return self.frame_index / self.settings.fps

    def throw(self, count: int | None = None, dice: Sequence[str] = ()) -> tuple[SynthDie, ...]:
        """Schedule a throw: the beam breaks, dice tumble in and come to rest. `dice` names
        each die's kind ("d6" has pips); without it, `count` pip d6 (or a random count)."""
        low, high = self.settings.dice
        count = len(dice) or count or int(self._rng.integers(low, high + 1))
        self.throws += 1
        tray = render_tray(
            self._seed * 7919 + self.throws,
            self._spec((count, count)),
            floor_seed=self._seed,
            dice=dice,
            looks=[dict(self.settings.looks).get(kind) for kind in dice],
        )
        self._script.append(lambda: self._drop(True))
        self._script.append(lambda: self._drop(False))
        for step in range(self.settings.fall_frames):
            amplitude = 60.0 * (1 - step / self.settings.fall_frames)
            self._script.append(partial(self._tumble, tray.image, amplitude))
        self._script.append(partial(self._settle, tray.image, tray.dice))
        return tray.dice

    def reach_in(self, clear: bool = True) -> None:
        """Schedule a hand reaching in and taking every die out (or leaving them, if not clear)."""
        for step in range(self.settings.hand_frames):
            self._script.append(partial(self._hand, step))
        if clear:
            self._script.append(lambda: self._settle(self.empty, ()))

    def wait(self, frames: int) -> None:
        """Schedule `frames` frames of the tray as it is."""
        for _ in range(frames):
            self._script.append(self._still)

    @property
    def idle(self) -> bool:
        """True when nothing is scheduled: every read is a still frame of the scene."""
        return not self._script

    def read(self, timeout: float | None = None) -> np.ndarray:
        if self.failing:
            raise FrameSourceError(self.failing)
        self.frame_index += 1
        frame = self._script.popleft()() if self._script else self._still()
        return frame

    def _with_noise(self, image: np.ndarray) -> np.ndarray:
        noise = self._noise[self.frame_index % len(self._noise)]
        return np.asarray(np.clip(image.astype(np.int16) + noise, 0, 255), dtype=np.uint8)

    def _still(self) -> np.ndarray:
        return self._with_noise(self.scene)

    def _drop(self, broken: bool) -> np.ndarray:
        if self.on_drop is not None:
            self.on_drop(broken)
        return self._still()

    def _tumble(self, landed: np.ndarray, amplitude: float) -> np.ndarray:
        """Dice still moving: the landed picture shaken and smeared by motion."""
        dx, dy = self._rng.uniform(-amplitude, amplitude, 2)
        shift = np.array([[1, 0, dx], [0, 1, dy]], dtype=np.float32)
        size = (landed.shape[1], landed.shape[0])
        moved = cv2.warpAffine(landed, shift, size, borderMode=cv2.BORDER_REPLICATE)
        return self._with_noise(np.asarray(cv2.blur(moved, (9, 3))))

    def _settle(self, image: np.ndarray, dice: tuple[SynthDie, ...]) -> np.ndarray:
        self.scene, self.dice = image, dice
        return self._still()

    def _hand(self, step: int) -> np.ndarray:
        """A forearm and hand sweeping in from the bottom edge over the tray."""
        frame = self.scene.copy()
        w, h = self.settings.size
        reach = (step + 1) / self.settings.hand_frames
        x = int(w * (0.3 + 0.1 * step))
        top = int(h * (1 - 0.7 * reach))
        cv2.rectangle(frame, (x - w // 12, top), (x + w // 12, h), SKIN, -1)
        cv2.ellipse(frame, (x, top), (w // 9, h // 9), 0, 0, 360, SKIN, -1)
        return self._with_noise(frame)


class SimulatedConfig(SourceConfig):
    """`source = "simulated"`: the simulated tray, seeded by the tower (`tidetower run --sim`)."""

    source: Literal["simulated"] = "simulated"

    def open(self, seed: int = 0) -> FrameSource:
        return SimulatedSource(seed)
