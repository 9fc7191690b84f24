"""Tell each candidate's kind and read numeral faces; pip d6 are left to the d6 reader."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tidetower.engine.tray import DieRead, Unreadable
from tidetower.vision.d6.decide import Verdict, out_of_frame
from tidetower.vision.d6.find import Candidate
from tidetower.vision.d6.nets import face_crop
from tidetower.vision.numerals.nets import (
    MARGIN,
    MODEL,
    NetOutput,
    crop_size,
    model_classes,
    run_numerals,
)
from tidetower.vision.numerals.profile import Match
from tidetower.vision.settings import ReaderSettings

TURNS = (0.0,)
"""The first look reads each die once."""
SECOND_LOOK = (90.0, 180.0, 270.0)
"""A die the first look leaves unsure is read again at these turns, and all averaged."""


@dataclass(frozen=True)
class Kinds:
    """A candidate's probabilities grouped: no die, a pip d6, and each numeral kind."""

    none: float
    pips: float
    numeral: dict[str, float]

    @property
    def likeliest(self) -> tuple[str, float]:
        """Return the likeliest group ("none", "pips" or a kind) and its probability."""
        groups = {"none": self.none, "pips": self.pips, **self.numeral}
        name = max(groups, key=lambda k: groups[k])
        return name, groups[name]


def kinds_of(row: np.ndarray, classes: tuple[str, ...]) -> Kinds:
    """Group one candidate's class probabilities by kind."""
    numeral: dict[str, float] = {}
    for p, name in zip(row, classes, strict=True):
        if ":" in name:
            kind = name.split(":")[0]
            numeral[kind] = numeral.get(kind, 0.0) + float(p)
    return Kinds(float(row[classes.index("none")]), float(row[classes.index("pips")]), numeral)


def faces_of(row: np.ndarray, classes: tuple[str, ...], kind: str) -> list[tuple[float, int]]:
    """Return (probability, value) of a kind's faces, likeliest first."""
    out = [
        (float(p), int(name.split(":")[1]))
        for p, name in zip(row, classes, strict=True)
        if name.split(":")[0] == kind and ":" in name
    ]
    return sorted(out, reverse=True)


def net_of(settings: ReaderSettings) -> Path:
    """Return the numeral net the settings ask for: the shipped one unless another is named."""
    return Path(settings.numeral_net) if settings.numeral_net else MODEL


def look(
    work: np.ndarray, candidates: list[Candidate], turns: tuple[float, ...], model: Path = MODEL
) -> NetOutput:
    """Run the numeral net on each candidate at each turn; average per candidate."""
    size = crop_size(model)
    crops = [face_crop(work, c.x, c.y, c.side * MARGIN, t, size) for c in candidates for t in turns]
    if not crops:
        return run_numerals(np.zeros((0, size, size, 3), np.uint8), model)
    out = run_numerals(np.stack(crops), model)
    n, k = len(candidates), len(turns)
    emb = out.embeddings.reshape(n, k, -1).mean(axis=1)
    emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-9)
    return NetOutput(out.probs.reshape(n, k, -1).mean(axis=1), emb)


def read_numerals(
    work: np.ndarray, candidates: list[Candidate], settings: ReaderSettings
) -> NetOutput:
    """Return the numeral net's verdict per candidate; unsure numeral dice get a second look."""
    model = net_of(settings)
    out = look(work, candidates, TURNS, model)
    classes = model_classes(model)
    unsure = [
        i
        for i, row in enumerate(out.probs)
        if _unsure(kinds_of(row, classes), row, classes, settings)
    ]
    if not unsure:
        return out
    again = look(work, [candidates[i] for i in unsure], TURNS + SECOND_LOOK, model)
    probs, emb = out.probs.copy(), out.embeddings.copy()
    probs[unsure], emb[unsure] = again.probs, again.embeddings
    return NetOutput(probs, emb)


def _unsure(
    kinds: Kinds, row: np.ndarray, classes: tuple[str, ...], settings: ReaderSettings
) -> bool:
    """Return whether a numeral-looking candidate is short of a sure kind and face."""
    kind, p = kinds.likeliest
    if kind in ("none", "pips"):
        return bool(
            sum(kinds.numeral.values()) >= settings.second_look_die_prob and p < settings.kind_min
        )
    return _face_confidence(row, classes, kinds, kind) < settings.numeral_min_confidence


def _face_confidence(row: np.ndarray, classes: tuple[str, ...], kinds: Kinds, kind: str) -> float:
    """Return the probability of a kind's likeliest face given that a die is there."""
    best = faces_of(row, classes, kind)[0][0]
    return best / max(1.0 - kinds.none, 1e-6)


def judge_numeral(
    c: Candidate, row: np.ndarray, d6: Verdict, size: tuple[int, int], settings: ReaderSettings
) -> Verdict:
    """Decide one candidate from the numeral net's row and the d6 reader's verdict: a pip
    d6 or no die is the d6 reader's to judge; a numeral kind this net's, and a die whose
    kind is sure is never dropped, only reported unreadable (its kind is the evidence)."""
    classes = model_classes(net_of(settings))
    kinds = kinds_of(row, classes)
    kind, p = kinds.likeliest
    if kind in ("none", "pips"):
        return d6
    w, h = size
    box = c.box(w, h)
    if p < settings.kind_min:
        # a die both readers doubt is dropped; one only the numeral net sees stays unreadable:
        # dropping faint finds too cost 10 of 859 numeral dice, silently (2026-12-01)
        if d6 is None and kinds.none >= settings.min_die_prob:
            return None
        return Unreadable(box, f"unsure of its kind: {kind}? ({p:.2f})")
    if out_of_frame(c, w, h, settings.edge_margin):
        return Unreadable(box, "half out of frame", kind)
    faces = faces_of(row, classes, kind)
    confidence = _face_confidence(row, classes, kinds, kind)
    if confidence >= settings.numeral_min_confidence:
        return DieRead(kind, faces[0][1], box, round(min(confidence, 1.0), 4))
    first, second = faces[0][1], faces[1][1]
    return Unreadable(
        box, f"unsure: {kind} {first} or {second} ({confidence:.2f})", kind, (first, second)
    )


def as_taught(
    c: Candidate, match: Match | None, verdict: Verdict, size: tuple[int, int]
) -> Verdict:
    """Return a taught face for a die close to one in the table's profile, else the verdict."""
    if match is None:
        return verdict
    kind, value = match.label.split(":")
    return DieRead(kind, int(value), c.box(*size), round(match.similarity, 4))
