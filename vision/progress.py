"""How far long work has got (many photos read, a profile taught, nets trained), on stderr:
click's progress bar on a terminal, nothing when stderr is piped or a file. Standard output,
which scripts parse (`--json`), never gets any of it."""

from __future__ import annotations

import contextlib
import operator
import sys
from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol, TextIO, TypeVar

import click

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar  # what click.progressbar returns

T = TypeVar("T")


class Along(Protocol):
    """Goes through `items` showing how far it got (`progress`), or not (`quietly`)."""

    def __call__(
        self, items: Iterable[T], label: str, length: int | None = None
    ) -> AbstractContextManager[Iterable[T]]:
        """A context whose value is `items`, to go through inside it."""
        ...


def quietly(
    items: Iterable[T], label: str, length: int | None = None
) -> AbstractContextManager[Iterable[T]]:
    """The items as they are: work done where no one watches a terminal (the tower's own)."""
    return contextlib.nullcontext(items)


def shows_bar(err: TextIO, lines: TextIO | None = None) -> bool:
    """Whether a bar is drawn on `err`: only on a terminal, and not when the command prints a
    line per item on `lines` and that is the terminal too (the lines say how far it got, and
    a bar redrawn between them would tear them)."""
    return _terminal(err) and (lines is None or not _terminal(lines))


def _terminal(stream: TextIO) -> bool:
    """True for a stream on a terminal (a closed or odd one is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def progress(
    items: Iterable[T],
    label: str,
    length: int | None = None,
    *,
    lines: TextIO | None = None,
    err: TextIO | None = None,
) -> ProgressBar[T]:
    """Click's progress bar over `items` on stderr (or `err`), where `shows_bar` says so and
    there is more than one item; hidden otherwise. Use it as click's: `with ... as bar:`."""
    err = err or sys.stderr
    few = 0 <= (length if length is not None else operator.length_hint(items, -1)) < 2
    hidden = few or not shows_bar(err, lines)
    return click.progressbar(
        items, length=length, label=label, file=err, show_pos=True, hidden=hidden
    )
