"""Read a numeral die's face with the pretrained recogniser: only the faces its kind has.

The middle of the die is cut from the frame at the camera's resolution, turned through a
full circle, and each legal face's text is scored by its CTC likelihood in every turn; the
turns are summed (the die is upright in one of them, unknown which). A 6 and a 9 are the
same glyph turned, so their dot or bar decides them (`marked_six`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import cv2
import numpy as np

from tidetower.vision.d6.nets import face_crop
from tidetower.vision.kinds import face_text, face_values
from tidetower.vision.numerals.recogniser import HEIGHT, recognise, text_log_likelihood

WINDOW = {"d4": 0.42, "d6": 0.5, "d8": 0.42, "d10": 0.4, "d12": 0.4, "d20": 0.35}
"""The window the recogniser reads spans this many die sides: the upward face's numeral and
little of its neighbours' (a d20's upward face is a small triangle in the middle)."""
FIRST_TURNS = tuple(float(t) for t in range(0, 360, 45))
"""The recogniser first reads a die at these turns (it reads text turned up to about 15
degrees well, to 25 less well)..."""
TURNS = tuple(sorted(FIRST_TURNS + tuple(t + 22.5 for t in FIRST_TURNS)))
"""... and at these when the first look leaves it unsure: every 22.5 degrees."""
ASPECT = 4 / 3
"""A line is this much wider than tall: room for a two-digit face."""
FAMILY = {"d10": ("d10", "d10-tens"), "d10-tens": ("d10", "d10-tens")}
"""Kinds one shape can be: a d10's shape says units or tens only by what it prints."""


@dataclass(frozen=True)
class Face:
    """One face a die may show and its log-score: CTC likelihood summed over turns."""

    kind: str
    value: int
    score: float


@dataclass(frozen=True)
class FaceRead:
    """A die's faces, likeliest first, as the recogniser scored them."""

    faces: tuple[Face, ...]
    elsewhere: Face | None = None
    """The likeliest text of a face this kind does not have (a 17 on a d8), if any."""

    @property
    def lead(self) -> float:
        """Return how many nats the likeliest face leads the second by."""
        if len(self.faces) < 2:
            return float("inf")
        return self.faces[0].score - self.faces[1].score

    @property
    def confidence(self) -> float:
        """Return the likeliest face's share of the faces' summed likelihood."""
        scores = np.asarray([f.score for f in self.faces])
        return float(np.exp(scores[0] - np.logaddexp.reduce(scores)))


def lines(
    image: np.ndarray, x: float, y: float, side: float, kind: str, turns: tuple[float, ...] = TURNS
) -> np.ndarray:
    """Cut the die's middle at each turn as the recogniser's (N, 48, W, 3) lines, as wide as
    two digits."""
    tall = side * WINDOW.get(kind, 0.4)
    width = round(HEIGHT * ASPECT)
    scale = HEIGHT / max(tall, 1.0)
    cuts = []
    for turn in turns:
        m = cv2.getRotationMatrix2D((x, y), turn, scale)
        m[0, 2] += width / 2 - x
        m[1, 2] += HEIGHT / 2 - y
        cuts.append(
            cv2.warpAffine(
                image, m, (width, HEIGHT), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
            )
        )
    return np.stack(cuts)


@cache
def texts(kind: str, value: int) -> tuple[str, ...]:
    """Return the ways a face may read: a 6 or a 9 with its dot or bar, or without."""
    text = face_text(kind, value)
    if text in ("6", "9"):
        return (text, f"{text}.", f"{text}_")
    return (text,)


def score_kind(logp: np.ndarray, kind: str) -> list[Face]:
    """Score each face of one kind over every line (turn) of the die."""
    faces = []
    for value in face_values(kind):
        per_text = [text_log_likelihood(logp, t) for t in texts(kind, value)]
        score = float(np.logaddexp.reduce(np.concatenate(per_text)))
        faces.append(Face(kind, value, score))
    return faces


def read_face(
    image: np.ndarray, x: float, y: float, side: float, kind: str, sure: float = float("inf")
) -> FaceRead:
    """Read a die of a known shape: every face its kind (or its shape's kinds) can show, and
    the best of the faces it cannot, to hold the shape against the numerals. The first look
    reads FIRST_TURNS; a die whose best face leads by less than `sure` nats is read at the
    turns between too, and all are summed."""
    first = recognise(lines(image, x, y, side, kind, FIRST_TURNS)).logp
    read = _scored(image, x, y, side, kind, FIRST_TURNS, first)
    if read.lead >= sure or read.lead < HOPELESS:
        return read
    between = tuple(t for t in TURNS if t not in FIRST_TURNS)
    more = recognise(lines(image, x, y, side, kind, between)).logp
    both = np.concatenate([first, more])
    return _scored(image, x, y, side, kind, FIRST_TURNS + between, both)


HOPELESS = 0.5
"""A first look whose best face leads by less than this is not read again: the turns
between rarely lift such a die to a sure read, and the GM is asked anyway."""


def _scored(
    image: np.ndarray,
    x: float,
    y: float,
    side: float,
    kind: str,
    turns: tuple[float, ...],
    logp: np.ndarray,
) -> FaceRead:
    """Score every face of a die's shape over the lines read at these turns."""
    family = FAMILY.get(kind, (kind,))
    faces = [f for k in family for f in score_kind(logp, k)]
    faces = sorted(faces, key=lambda f: f.score, reverse=True)
    mark = Mark(image, x, y, side * WINDOW.get(kind, 0.4) * MARK_REACH, turns, logp)
    return FaceRead(tuple(_six_or_nine(faces, mark)), _elsewhere(logp, family))


def _elsewhere(logp: np.ndarray, family: tuple[str, ...]) -> Face | None:
    """Return the likeliest face text no kind of the family prints, with the kind that does."""
    own = {face_text(k, v) for k in family for v in face_values(k)}
    others = {face_text(k, v): (k, v) for k in OTHER_KINDS for v in face_values(k)}
    scored = [
        Face(*others[text], float(np.logaddexp.reduce(text_log_likelihood(logp, text))))
        for text in sorted(set(others) - own)
    ]
    return max(scored, key=lambda f: f.score, default=None)


OTHER_KINDS = ("d20", "d10-tens")
"""Between them these kinds print every face text there is (1..20, 00..90)."""


MARK_REACH = 1.6
"""The mark under a 6 or a 9 is looked for in a window this much larger than the numeral's."""


@dataclass(frozen=True)
class Mark:
    """Where to look for a 6's or a 9's mark: the die, the turns read, and their reading."""

    image: np.ndarray
    x: float
    y: float
    window: float
    turns: tuple[float, ...]
    logp: np.ndarray

    def says_six(self, six: str, nine: str) -> bool | None:
        """Return whether the mark says 6 (True) or 9 (False): under the glyph turned upright
        as the one and not under it turned upright as the other; None when it does not say."""
        under_six, under_nine = self._under(six), self._under(nine)
        if under_six == under_nine:
            return None
        return bool(under_six)

    def _under(self, text: str) -> bool:
        """Return whether a mark sits under the glyph turned where it best reads as `text`."""
        turn = self.turns[int(np.argmax(text_log_likelihood(self.logp, text)))]
        crop = face_crop(self.image, self.x, self.y, self.window, turn, 2 * HEIGHT)
        return marked_six(crop) is True


def _six_or_nine(faces: list[Face], mark: Mark) -> list[Face]:
    """Order a 6 and a 9 (or 60 and 90) by their mark when they lead: the glyphs alone are
    the same turned by half a circle."""
    top = faces[0]
    pair = _turned_twin(top)
    if pair is None:
        return faces
    twin = next((f for f in faces if (f.kind, f.value) == pair), None)
    if twin is None or faces.index(twin) > 1:
        return faces
    six = top if face_text(top.kind, top.value).startswith("6") else twin
    nine = twin if six is top else top
    marked = mark.says_six(face_text(six.kind, six.value), face_text(nine.kind, nine.value))
    if marked is None:  # the glyphs alone cannot tell them: the two lead together
        return [top, Face(twin.kind, twin.value, top.score), *faces[2:]]
    winner, loser = (
        (six, twin if six is top else top) if marked else (twin if six is top else top, six)
    )
    rest = [f for f in faces if f not in (winner, loser)]
    return [
        Face(winner.kind, winner.value, max(top.score, twin.score)),
        Face(loser.kind, loser.value, min(top.score, twin.score)),
        *rest,
    ]


def _turned_twin(face: Face) -> tuple[str, int] | None:
    """Return the face a face reads as when turned by half a circle (6 and 9, 60 and 90)."""
    twins = {"6": "9", "9": "6", "60": "90", "90": "60"}
    text = face_text(face.kind, face.value)
    if text not in twins:
        return None
    return face.kind, int(twins[text])


def marked_six(line: np.ndarray) -> bool | None:
    """Return whether the upright glyph in a line is a 6 by its mark (True), a 9 (False), or
    None when no mark is seen: dice print a dot or bar under or beside the foot of a 6 and a
    9, so with the glyph upright as a 6, a mark below its middle says 6, above says 9."""
    marks = _ink_parts(line)
    if marks is None:
        return None
    glyph, others = marks
    gx, gy, gh = glyph
    near = [(x, y) for x, y, _ in others if abs(x - gx) < 1.0 * gh and abs(y - gy) < 1.2 * gh]
    if len(near) != 1:
        return None
    return near[0][1] > gy


def _ink_parts(
    line: np.ndarray,
) -> tuple[tuple[float, float, float], list[tuple[float, float, float]]] | None:
    """Return the glyph (centre x, y and height) and the other ink parts of a line: ink is
    what Otsu's threshold sets apart from the die's body, the rarer side of it."""
    grey = cv2.GaussianBlur(cv2.cvtColor(line, cv2.COLOR_BGR2GRAY), (3, 3), 0)
    _, dark = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
    ink = dark if dark.mean() < 127 else 255 - dark
    count, _, stats, centres = cv2.connectedComponentsWithStats(ink.astype(np.uint8))
    h, w = line.shape[:2]
    parts = [
        (float(centres[i][0]), float(centres[i][1]), float(stats[i][3]), int(stats[i][4]))
        for i in range(1, count)
        if stats[i][0] > 0
        and stats[i][1] > 0
        and stats[i][0] + stats[i][2] < w
        and stats[i][1] + stats[i][3] < h
    ]
    if not parts:
        return None
    central = [p for p in parts if abs(p[0] - w / 2) < w / 3 and abs(p[1] - h / 2) < h / 3]
    if not central:
        return None
    glyph = max(central, key=lambda p: p[3])
    small = [p[:3] for p in parts if p is not glyph and glyph[3] * 0.03 <= p[3] <= glyph[3] * 0.4]
    return glyph[:3], small
