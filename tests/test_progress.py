"""Progress of long work: a bar on a terminal's stderr, nothing when piped, never on stdout."""

from __future__ import annotations

import io

from tidetower.vision.progress import progress, quietly, shows_bar


class Terminal(io.StringIO):
    """A stream that says it is a terminal, as a real one's isatty() does."""

    def isatty(self) -> bool:
        return True


def test_a_bar_only_on_a_terminal_and_not_between_lines_on_that_terminal() -> None:
    assert shows_bar(Terminal())
    assert shows_bar(Terminal(), lines=io.StringIO())  # results piped: the bar shows
    assert not shows_bar(Terminal(), lines=Terminal())  # results on the terminal: no bar
    assert not shows_bar(io.StringIO())  # stderr piped or a file: nothing


def test_click_draws_the_bar_on_the_terminal_it_is_given() -> None:
    terminal, piped = Terminal(), io.StringIO()
    for stream in (terminal, piped):
        with progress(range(3), "reading 3 photos", err=stream) as bar:
            assert list(bar) == [0, 1, 2]
    assert "reading 3 photos" in terminal.getvalue() and "3/3" in terminal.getvalue()
    assert piped.getvalue() == ""
    one = Terminal()
    with progress(["a"], "reading 1 photo", err=one) as bar:
        assert list(bar) == ["a"]
    assert one.getvalue() == ""  # one item: no bar to watch
    with quietly(iter("ab"), "teaching") as items:
        assert list(items) == ["a", "b"]
