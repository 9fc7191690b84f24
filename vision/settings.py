"""Reader settings and tray calibration: every tunable the reader has lives here, none per image."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import numpy as np
from pydantic import AfterValidator, ConfigDict, Field, with_config

from tidetower.engine.files import regular_file
from tidetower.vision.colours import COLOURS
from tidetower.vision.d6.nets import face_models
from tidetower.vision.kinds import KINDS
from tidetower.vision.numerals.kind import kind_classes
from tidetower.vision.numerals.nets import model_classes
from tidetower.vision.numerals.profile import load_profile


def _known_pins(pins: dict[str, str]) -> dict[str, str]:
    """Accept pins of known kinds to named colours only, naming the choices otherwise."""
    for kind, colour in pins.items():
        if kind not in KINDS:
            raise ValueError(f"{kind!r} is not a die kind: expected one of {', '.join(KINDS)}")
        if colour not in COLOURS:
            raise ValueError(f"{colour!r} is not a colour: expected one of {', '.join(COLOURS)}")
    return pins


def _readable_profile(folder: str | None) -> str | None:
    """Accept a taught profile only if it can be read, so a bad path fails at start-up."""
    if folder is not None:
        load_profile(folder)  # ProfileError is a ValueError: the config names the key
    return folder


MAX_NET_BYTES = 256 << 20
"""A net the Pi can run is a few MB; a file this big is no net of ours."""


def _loadable(
    what: str, classes: Callable[[Path], tuple[str, ...]]
) -> Callable[[str | None], str | None]:
    """Return a check that accepts a net file only if onnxruntime loads it (`classes` reads
    its metadata), so a bad path fails at start-up naming `what` it should be."""

    def check(path: str | None) -> str | None:
        if path is not None:
            regular_file(path, MAX_NET_BYTES)  # a FIFO would hang onnxruntime's read
            try:
                classes(Path(path))
            except Exception as err:  # onnxruntime raises its own, unrelated, error types
                raise ValueError(f"cannot load a {what} from {path}: {err}") from err
        return path

    return check


_loadable_net = _loadable("numeral net", model_classes)
_loadable_kind_net = _loadable("kind net", kind_classes)


def _shipped_readers(count: int) -> int:
    """Accept a face-reader count the package can serve (0: all), so a config asking for
    more fails at start-up, not on every roll."""
    shipped = len(face_models())
    if not 0 <= count <= shipped:
        raise ValueError(f"must be 0 (all) to {shipped}, the face readers shipped")
    return count


@with_config(ConfigDict(extra="forbid"))  # a config's [camera.reader] with a typo is an error
@dataclass(frozen=True)
class ReaderSettings:
    """Knobs of the dice reader; defaults were chosen on the dev split and synthetic trays only."""

    work_size: Annotated[int, Field(ge=64, le=8192)] = 640
    """Photos are scaled so their longer side is this many pixels before reading."""
    balance: bool = False
    """Undo a colour cast or dim light stronger than the nets learned from (read.balanced),
    for a tower whose light is coloured or dim. Off by default: a tray of coloured dice on a
    coloured floor can look like a cast, and then numeral dice read worse."""
    find_threshold: float = 0.2
    """Finder heat above which a peak is taken as a die centre candidate."""
    find_mirrored: bool = True
    """Average the finder's heat over the photo and its mirror image: steadier peaks, for
    a second run of the finder."""
    same_die: float = 0.5
    """Finder peaks closer than this many die sides (the larger) are one die, unless the
    weaker is a die leaning on the stronger (`leaning_die`, `leaning_heat`)."""
    leaning_die: float = 0.35
    """Peaks closer than this many die sides are one die whatever their heat."""
    leaning_heat: float = 0.4
    """Between `leaning_die` and `same_die`, a weaker peak this hot and of the same size is a
    second die leaning on the first."""
    leaning_side: float = 0.8
    """Two peaks are "of the same size" when the smaller side is at least this times the
    larger; a smaller close peak is a side face seen in perspective."""
    min_structure: float = 8.0
    """A candidate is looked at only when its structure at a die's scale is at least this
    many times white noise's (`vision/structure.py`): noise of any kind measures about 1
    (at most 4 in 37,517 finds on 700 noise pictures, `bench/vision_noise.py`), dice in the
    hundreds. Set from the noise alone (its die-scale band holds some 11 independent
    samples, so twice the largest seen is far beyond chance), not from any photo of dice."""
    background_contrast: float = 12.0
    """With a calibration frame, a die must differ from the empty tray by this (grey levels)."""
    min_confidence: float = 0.60
    """Below this the die is reported unreadable rather than guessed."""
    min_die_prob: float = 0.5
    """A candidate is a die at all when the face reader says so with at least this."""
    heat_trust: float = 3.0
    """Confidence is scaled by min(1, finder heat x this): a faint find makes a less sure read."""
    unreadable_heat: float = 0.5
    """A die too unsure to read is reported only when the finder is this sure a die is there;
    below it the candidate is dropped as a mark on the tray, not a die."""
    second_look: bool = True
    """Read dice the first look leaves unsure again, in more views (decide.SECOND_LOOK) and
    by every face reader."""
    second_look_die_prob: float = 0.3
    """A candidate gets a second look when the face reader thinks it a die at least this much."""
    second_look_below: float = 0.60
    """A die read with less confidence than this gets a second look."""
    first_look_readers: Annotated[int, AfterValidator(_shipped_readers)] = 2
    """The first look asks this many face readers (0: all); a second look asks all of them."""
    pip_count: bool = True
    """Count a pip d6's pips with OpenCV too (vision/d6/pips.py): where the count is sure and
    the nets read another face, the die is unreadable, both opinions in the reason."""
    edge_margin: float = 0.004
    """A box this close to the photo's edge (fraction) is a die half out of frame."""
    numerals: bool = True
    """Tell every die's kind with the kind net and read numeral dice (d4, d6, d8, d10,
    d10-tens, d12, d20) with the pretrained recogniser (rapidocr's PP-OCR model); off, the
    reader reads pip d6 only."""
    kind_min: float = 0.6
    """A numeral die's kind must be this likely (the kind net's share), else it is unreadable."""
    numeral_lead: float = 3.5
    """A numeral die's likeliest face must lead the next by this many nats (the recogniser's
    log-likelihoods summed over turns), else it is unreadable with both faces offered. The
    smallest lead at which the recogniser read no more than 1 % of dice-values' top-down
    and coloured-floor groups wrong (3.0: 1.4 %, 3.5: 0.8 %); checked on its slanted and
    wooden groups and on numerals-taught, which it was not chosen on (docs/BENCHMARKS.md)."""
    close_up: bool = False
    """A photo where no die is found is read once more as a close-up of one die filling
    the frame (`tidetower read` does this; a tower's camera never takes close-ups)."""
    pins: Annotated[dict[str, str], AfterValidator(_known_pins)] = field(default_factory=dict)
    """Kinds pinned to one colour, e.g. {"d20": "white"} for a table with two d20 where the
    white one is the Omen: a die of that kind in another colour is set aside, not read."""
    numeral_net: Annotated[str | None, AfterValidator(_loadable_net)] = None
    """An .onnx numeral net of your own (`python -m tidetower.vision.training.numerals`) in
    place of the shipped one, for a taught profile's matching. A profile belongs to its net."""
    kind_net: Annotated[str | None, AfterValidator(_loadable_kind_net)] = None
    """An .onnx kind net of your own (`python -m tidetower.vision.training.kinds`) in place
    of the shipped one."""
    profile: Annotated[str | None, AfterValidator(_readable_profile)] = None
    """A folder of the table's taught dice (`tidetower teach`): a die close to a taught face
    reads as that face; others are read as without it. Its `dice/` are read as `dice` are."""
    dice: str | None = None
    """A folder of the table's own dice (`tidetower dice`), each read by a reader of its own
    taught from its photos; a die none of them claims is read as a die the tower has not met."""


@dataclass(frozen=True)
class Calibration:
    """What is known about the empty tray: a background frame and the tray region."""

    background: np.ndarray | None = None
    """BGR photo of the empty tray, same framing as the rolls (any resolution)."""
    tray: tuple[float, float, float, float] | None = None
    """Normalised (x0, y0, x1, y1) of the tray floor; dice outside it are ignored."""
