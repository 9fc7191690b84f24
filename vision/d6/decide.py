"""Read the face of each candidate and decide: a die read, a die unreadable, or no die at all."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tidetower.engine.tray import Box, DieRead, Unreadable
from tidetower.vision.d6.find import Candidate
from tidetower.vision.d6.nets import FACE_MARGIN, face_crop, run_faces
from tidetower.vision.d6.pips import count_pips
from tidetower.vision.settings import ReaderSettings

View = tuple[float, float, bool]
"""One look at a die: turn (degrees), crop scale (times the usual crop), mirrored or not."""
TURNS: tuple[View, ...] = ((0.0, 1.0, False), (90.0, 1.0, False))
"""Each die is read in these views and the answers averaged: steadier than one look."""
SECOND_LOOK: tuple[View, ...] = (
    (180.0, 1.0, False),
    (270.0, 1.0, False),
    (45.0, 1.1, False),
    (135.0, 1.1, True),
)
"""A die the first look leaves unsure is read again in these views too, and all averaged;
only the few unsure dice pay for it, so the median reading time barely moves."""


def face_probabilities(
    work: np.ndarray,
    candidates: list[Candidate],
    views: tuple[View, ...] = TURNS,
    readers: int = 0,
) -> np.ndarray:
    """Return (N, 7) probabilities per candidate, averaged over the views and the first
    `readers` face readers (0: all)."""
    crops = []
    for c in candidates:
        for turn, scale, mirror in views:
            crop = face_crop(work, c.x, c.y, c.side * FACE_MARGIN * scale, turn)
            crops.append(crop[:, ::-1] if mirror else crop)
    if not crops:
        return np.zeros((0, 7), np.float32)
    probs = run_faces(np.stack(crops), readers)
    return np.asarray(probs.reshape(len(candidates), len(views), 7).mean(axis=1), np.float32)


def _value_and_confidence(
    c: Candidate, p: np.ndarray, settings: ReaderSettings
) -> tuple[int, float]:
    """Return the likeliest face and its probability given a die, damped by a faint find."""
    value = int(np.argmax(p[1:])) + 1
    trust = min(1.0, c.heat * settings.heat_trust)
    return value, float(p[value]) / max(1.0 - float(p[0]), 1e-6) * trust


def look_again(
    work: np.ndarray, candidates: list[Candidate], probs: np.ndarray, settings: ReaderSettings
) -> np.ndarray:
    """Read unsure candidates again, by every face reader in the first look's views and
    SECOND_LOOK's, and take that average instead of the first look's."""
    unsure = [
        i
        for i, (c, p) in enumerate(zip(candidates, probs, strict=True))
        if 1.0 - float(p[0]) >= settings.second_look_die_prob
        and _value_and_confidence(c, p, settings)[1] < settings.second_look_below
    ]
    if not unsure:
        return probs
    out = probs.copy()
    out[unsure] = face_probabilities(work, [candidates[i] for i in unsure], TURNS + SECOND_LOOK)
    return out


def _runner_up(p: np.ndarray, best: int) -> int:
    """Return the second most likely face value."""
    faces = p[1:].copy()
    faces[best - 1] = -1.0
    return int(np.argmax(faces)) + 1


def out_of_frame(c: Candidate, w: int, h: int, margin: float) -> bool:
    """Return whether a die's box runs off the photo, so part of it cannot be seen."""
    half = c.side / 2
    m = margin * max(w, h)
    return c.x - half < -m or c.y - half < -m or c.x + half > w + m or c.y + half > h + m


def judge(
    c: Candidate, p: np.ndarray, size: tuple[int, int], settings: ReaderSettings, work: np.ndarray
) -> DieRead | Unreadable | None:
    """Decide one candidate from its face probabilities: read, unreadable, or not a die."""
    if 1.0 - float(p[0]) < settings.min_die_prob:
        return None
    w, h = size
    box = c.box(w, h)
    # the face's probability given that this is a die, damped when the finder hesitated
    value, confidence = _value_and_confidence(c, p, settings)
    if out_of_frame(c, w, h, settings.edge_margin):
        return Unreadable(box, "half out of frame")
    if confidence < settings.min_confidence and c.heat < settings.unreadable_heat:
        return None
    counted = count_pips(work, c).value if settings.pip_count else None
    if confidence >= settings.min_confidence:
        return checked(DieRead("d6", value, box, round(min(confidence, 1.0), 4)), counted)
    return unsure(box, (value, _runner_up(p, value)), confidence, counted)


def checked(die: DieRead, counted: int | None) -> DieRead | Unreadable:
    """Hold the nets' read against the pip count: agreeing, say so; disagreeing, ask."""
    if counted is None:
        return die
    if counted == die.value:
        return replace(die, check=f"{counted} pips counted")
    reason = f"two opinions: the nets read {die.value}, the pips count {counted}"
    return Unreadable(die.box, reason, "d6", (die.value, counted))


def unsure(box: Box, faces: tuple[int, int], confidence: float, counted: int | None) -> Unreadable:
    """Report a die the nets are unsure of, the pip count (if any) first among its faces."""
    reason = f"unsure: {faces[0]} or {faces[1]} ({confidence:.2f})"
    if counted is None:
        return Unreadable(box, reason, "d6", faces)
    ordered = (counted, *(f for f in faces if f != counted))
    return Unreadable(box, f"{reason}; the pips count {counted}", "d6", ordered)


Verdict = DieRead | Unreadable | None
"""What became of one candidate: a die read, a die seen but unreadable, or no die."""


def verdicts(
    work: np.ndarray, candidates: list[Candidate], settings: ReaderSettings
) -> list[Verdict]:
    """Judge each candidate as a pip d6, in the candidates' order."""
    h, w = work.shape[:2]
    probs = face_probabilities(work, candidates, TURNS, settings.first_look_readers)
    if settings.second_look:
        probs = look_again(work, candidates, probs, settings)
    return [judge(c, p, (w, h), settings, work) for c, p in zip(candidates, probs, strict=True)]


def split(found: list[Verdict]) -> tuple[tuple[DieRead, ...], tuple[Unreadable, ...]]:
    """Return the dice read and the dice unreadable among verdicts; non-dice are dropped."""
    dice = tuple(v for v in found if isinstance(v, DieRead))
    unreadable = tuple(v for v in found if isinstance(v, Unreadable))
    return dice, unreadable


def decide(
    work: np.ndarray, candidates: list[Candidate], settings: ReaderSettings
) -> tuple[tuple[DieRead, ...], tuple[Unreadable, ...]]:
    """Turn candidates into dice read and dice seen but unreadable; drop non-dice."""
    return split(verdicts(work, candidates, settings))
