"""Listeners one failure cannot stop, and the problems they report.

A roll is stored before anyone hears of it; a listener that then fails (a terminal that
cannot draw it, a wire that cannot publish it) must stop neither the loop nor the listeners
after it. The failure is logged and kept among the table's latest problems, which the
tower's `tower` payload and the page show.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, ParamSpec

log = logging.getLogger(__name__)

P = ParamSpec("P")
LATEST = 5
"""How many problems are kept to show: the newest, one of each."""
LONGEST = 300
"""Characters of one problem's sentence kept (an error may quote a whole body)."""


def printable(sentence: str) -> str:
    """`sentence` as text any terminal, log or wire takes: lone surrogates and control
    characters escaped, and cut to LONGEST characters."""
    escaped = sentence.encode("utf-8", "backslashreplace").decode("utf-8")
    shown = "".join(_shown(c) for c in escaped)
    return shown if len(shown) <= LONGEST else shown[: LONGEST - 1] + "…"


def _shown(char: str) -> str:
    if char.isprintable():
        return char
    return " " if char.isspace() else repr(char)[1:-1]  # a newline in an error: one line


class Problems:
    """What the tower could not do lately (oldest first), each logged when it is new."""

    def __init__(self) -> None:
        self._latest: deque[str] = deque(maxlen=LATEST)
        self._lock = threading.Lock()
        self.listeners: list[Callable[[str], None]] = []
        """Called with each new problem's sentence (e.g. to publish it), from any thread."""

    def report(self, sentence: str, error: BaseException | None = None) -> None:
        """Keep and log a problem; one already among the latest is not repeated."""
        sentence = printable(sentence)
        with self._lock:
            if sentence in self._latest:
                return
            self._latest.append(sentence)
        log.error("%s", sentence, exc_info=error)
        for listener in list(self.listeners):
            try:
                listener(sentence)
            except Exception:  # the report must not become a second failure
                log.exception("telling of a problem failed")

    @property
    def latest(self) -> tuple[str, ...]:
        """The latest problems, oldest first."""
        with self._lock:
            return tuple(self._latest)


class Hooks(list[Callable[P, None]], Generic[P]):
    """Listeners called in turn; one that fails is reported, and the rest are still called."""

    def __init__(self, what: str, problems: Problems) -> None:
        super().__init__()
        self.what = what
        """What the listeners do, for the report: e.g. "drawing or announcing it"."""
        self.problems = problems

    def call(self, about: str, /, *args: P.args, **kwargs: P.kwargs) -> None:
        """Call every listener with the arguments; `about` names the event for a report."""
        for hook in list(self):
            try:
                hook(*args, **kwargs)
            except Exception as error:
                self.problems.report(
                    f"{about}: {self.what} failed ({type(error).__name__}: {error});"
                    " the tower carried on",
                    error,
                )
