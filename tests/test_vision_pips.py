"""The pip counter, the d6 reader's second opinion: sure when it speaks, on dice of any colour."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tidetower.engine.tray import DieRead, Unreadable
from tidetower.vision.d6.decide import checked
from tidetower.vision.d6.find import Candidate, find_dice
from tidetower.vision.d6.pips import count_pips
from tidetower.vision.read import read_dice
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import TraySpec, render_tray
from tidetower.vision.synth.render import BODIES, INK_NAMES, INKS, SynthDie

PIP_SEED = 9_700_000
"""Seeds for these tests: the counter's constants were set on seeds 9,000,000 to 9,699,999."""
PIPS = dict(zip(INK_NAMES, INKS, strict=True))


def _luma(bgr: tuple[int, int, int]) -> float:
    """Return a colour's brightness, as a camera sees it."""
    return 0.114 * bgr[0] + 0.587 * bgr[1] + 0.299 * bgr[2]


PAIRS = [
    (body, pip)
    for body, b in BODIES.items()
    for pip, p in PIPS.items()
    if abs(_luma(b) - _luma(p)) >= 40 or body == pip == "red"  # red on red: real, and hard
]


def _die_under(c: Candidate, dice: tuple[SynthDie, ...], w: int, h: int) -> SynthDie | None:
    """Return the rendered die whose box holds the candidate's centre."""
    for die in dice:
        x0, y0, x1, y1 = die.box
        if x0 * w <= c.x <= x1 * w and y0 * h <= c.y <= y1 * h:
            return die
    return None


def _counts(body: tuple[int, int, int], pip: tuple[int, int, int]) -> Counter[str]:
    """Count pips on every die found in a few trays of one colour pair: right, wrong, silent."""
    spec = TraySpec(
        size=(640, 480),
        count=(3, 8),
        floors=("grey", "dark", "felt", "wood"),
        dice_colour=(body, pip),
    )
    out: Counter[str] = Counter()
    for seed in range(PIP_SEED, PIP_SEED + 4):
        tray = render_tray(seed, spec)
        h, w = tray.image.shape[:2]
        for c in find_dice(tray.image, ReaderSettings()):
            die = _die_under(c, tray.dice, w, h)
            if die is not None:
                value = count_pips(tray.image, c).value
                out["silent" if value is None else "right" if value == die.value else "wrong"] += 1
    return out


@pytest.mark.slow
def test_the_pip_counter_is_never_wrong_on_any_colour_pair() -> None:
    total: Counter[str] = Counter()
    for body, pip in PAIRS:
        counts = _counts(BODIES[body], PIPS[pip])
        assert counts["wrong"] == 0, f"{pip} pips on {body}: {dict(counts)}"
        assert counts["right"] >= 1, f"{pip} pips on {body}: it never spoke ({dict(counts)})"
        total += counts
    assert len(PAIRS) >= 25
    assert total["right"] >= 0.3 * sum(total.values())  # it speaks for a good share of dice


def test_the_pip_counter_says_nothing_about_an_empty_tray() -> None:
    floor = np.full((200, 200, 3), 128, np.uint8)
    result = count_pips(floor, Candidate(100, 100, 50, 1.0))
    assert result.value is None and result.reason == "0 pip-like marks"


def test_agreeing_opinions_are_said_and_disagreeing_ones_ask_the_table() -> None:
    die = DieRead("d6", 4, (0.1, 0.1, 0.2, 0.2), 0.93)
    assert checked(die, None) == die
    agreed = checked(die, 4)
    assert isinstance(agreed, DieRead) and agreed.check == "4 pips counted"
    assert agreed.to_dict()["check"] == "4 pips counted"
    asked = checked(die, 5)
    assert isinstance(asked, Unreadable) and asked.faces == (4, 5) and asked.die == "d6"
    assert asked.reason == "two opinions: the nets read 4, the pips count 5"


def test_a_reading_says_where_the_pip_count_agreed() -> None:
    checks = []
    for seed in range(PIP_SEED, PIP_SEED + 5):
        reading = read_dice(render_tray(seed).image)
        checks += [d.check == f"{d.value} pips counted" for d in reading.dice if d.check]
        off = read_dice(render_tray(seed).image, settings=ReaderSettings(pip_count=False))
        assert not any(d.check for d in off.dice)
    assert checks and all(checks)
