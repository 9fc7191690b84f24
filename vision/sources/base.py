"""The frame-source interface: frames in, nothing else, swappable like gpiozero's pin factories."""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from abc import ABC, abstractmethod
from types import TracebackType

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from tidetower.engine.files import BoundedPath
from tidetower.vision.settings import ReaderSettings

log = logging.getLogger(__name__)


class FrameSourceError(RuntimeError):
    """The camera cannot give a frame now: unplugged, stalled, or the file is broken."""


class FrameTimeout(FrameSourceError):
    """No frame arrived in time: the camera has stopped or frozen."""


class SourceExhausted(FrameSourceError):
    """A finite source (a replayed folder or video) has no more frames."""


class FrameSource(ABC):
    """Gives BGR frames of the tray, one per `read()`, until closed."""

    closed: bool = False

    @abstractmethod
    def read(self, timeout: float | None = None) -> np.ndarray:
        """The next frame; FrameSourceError if there is none within `timeout` seconds."""

    def close(self) -> None:
        """Release the camera or file."""
        self.closed = True

    def __enter__(self) -> FrameSource:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


class ThreadedSource(FrameSource):
    """A source whose driver blocks: a thread grabs frames so `read` can time out.

    Closing stops the thread and waits for it before the driver is released (`release`): a
    driver freed while its grab is under way crashes the process (OpenCV's VideoCapture
    does, with a segmentation fault).
    """

    release_wait: float = 5.0
    """Seconds to wait for a grab under way to return before giving up on releasing."""

    def __init__(self) -> None:
        self._frames: queue.Queue[np.ndarray | BaseException] = queue.Queue(maxsize=1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=type(self).__name__, daemon=True)
        self._thread.start()

    @abstractmethod
    def grab(self) -> np.ndarray:
        """Block until the driver delivers the next frame (runs on the grabbing thread)."""

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                item: np.ndarray | BaseException = self.grab()
            except Exception as error:  # handed to the reader, who decides what it means
                item = error
                self._stop.wait(0.1)  # a camera that keeps failing must not spin a core
            self._offer(item)

    def _offer(self, item: np.ndarray | BaseException) -> None:
        """Keep only the newest frame: a slow reader sees the tray as it is now."""
        with contextlib.suppress(queue.Empty):
            self._frames.get_nowait()
        self._frames.put(item)

    def read(self, timeout: float | None = None) -> np.ndarray:
        try:
            item = self._frames.get(timeout=timeout)
        except queue.Empty:
            raise FrameTimeout(f"no frame from {type(self).__name__} in {timeout} s") from None
        if isinstance(item, BaseException):
            raise FrameSourceError(f"{type(self).__name__}: {item}") from item
        return item

    def release(self) -> None:
        """Free the driver; called once no grab can run any more."""

    def close(self) -> None:
        """Stop grabbing, wait for the grab under way, then release the driver."""
        if self.closed:
            return
        self._stop.set()
        super().close()
        if self._thread is not threading.current_thread():
            self._thread.join(self.release_wait)
        if self._thread.is_alive():  # a driver stuck in a grab: leave it rather than crash
            log.warning(
                "%s: a grab did not return; the driver is not released", type(self).__name__
            )
            return
        self.release()


class SourceConfig(BaseModel, ABC):
    """`[camera]`: the keys every frame source takes; each source's own model (in its
    module, registered in vision/sources/registry.py) adds its `source` name and its keys,
    and refuses any other."""

    model_config = ConfigDict(extra="forbid")
    size: tuple[int, int] | None = None
    calibration: BoundedPath | None = None
    frame_timeout_s: float = Field(2.0, gt=0, le=3600)
    reader: ReaderSettings = Field(default_factory=ReaderSettings)
    """[camera.reader]: the dice reader's knobs (vision/settings.py), its taught `profile` and
    colour `pins`; the defaults suit most trays."""

    @abstractmethod
    def open(self, seed: int = 0) -> FrameSource:
        """The frame source this config names (`seed`: the simulated tray's)."""
