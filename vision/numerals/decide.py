"""Tell each candidate's kind by the kind net and read numeral faces by the recogniser; pip d6
are left to the d6 reader.

Kinds and faces are read from the frame at the camera's resolution: the finder works on the
small copy, and each die is cut from the full frame where it found it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tidetower.engine.tray import DieRead, Unreadable
from tidetower.vision.d6.decide import Verdict, out_of_frame, verdicts
from tidetower.vision.d6.find import Candidate
from tidetower.vision.d6.nets import face_crop
from tidetower.vision.kinds import face_text
from tidetower.vision.numerals.faces import FaceRead, read_face
from tidetower.vision.numerals.kind import KIND_MODEL, kind_classes, read_kinds
from tidetower.vision.numerals.nets import MARGIN, MODEL, NetOutput, crop_size, run_numerals
from tidetower.vision.numerals.profile import Match
from tidetower.vision.settings import ReaderSettings

TAUGHT_TURNS = (0.0,)
"""A taught profile matches a die by the numeral net's embedding of it at these turns."""
PIP_LIKE = ("none", "pips")
"""Kind-net classes the d6 reader judges: a pip d6, or maybe no die at all."""


@dataclass(frozen=True)
class Shape:
    """What the kind net says of one candidate: its likeliest class and that class's share."""

    kind: str
    p: float
    none: float


def shapes_of(probs: np.ndarray, classes: tuple[str, ...]) -> list[Shape]:
    """Return each candidate's likeliest kind-net class."""
    out = []
    for row in probs:
        best = int(np.argmax(row))
        out.append(Shape(classes[best], float(row[best]), float(row[classes.index("none")])))
    return out


def net_of(settings: ReaderSettings) -> Path:
    """Return the numeral net a taught profile matches with: the shipped one unless named."""
    return Path(settings.numeral_net) if settings.numeral_net else MODEL


def kind_net_of(settings: ReaderSettings) -> Path:
    """Return the kind net the settings ask for: the shipped one unless another is named."""
    return Path(settings.kind_net) if settings.kind_net else KIND_MODEL


def judge_all(
    frame: np.ndarray, work: np.ndarray, candidates: list[Candidate], settings: ReaderSettings
) -> list[Verdict]:
    """Judge every candidate: its shape by the kind net, then pips or numerals as it says."""
    if not settings.numerals:
        return verdicts(work, candidates, settings)
    scale = frame.shape[1] / work.shape[1]
    at = [(c.x * scale, c.y * scale, c.side * scale) for c in candidates]
    net = kind_net_of(settings)
    shapes = shapes_of(read_kinds(frame, at, net), kind_classes(net))
    pip_like = [i for i, s in enumerate(shapes) if s.kind in PIP_LIKE]
    out: list[Verdict] = [None] * len(candidates)
    d6 = verdicts(work, [candidates[i] for i in pip_like], settings)
    for i, verdict in zip(pip_like, d6, strict=True):
        out[i] = verdict
    size = (work.shape[1], work.shape[0])
    for i, shape in enumerate(shapes):
        if shape.kind not in PIP_LIKE:
            out[i] = judge_numeral(frame, candidates[i], at[i], shape, size, settings)
    return out


def judge_numeral(
    frame: np.ndarray,
    c: Candidate,
    at: tuple[float, float, float],
    shape: Shape,
    size: tuple[int, int],
    settings: ReaderSettings,
) -> Verdict:
    """Decide a candidate of a numeral shape: unsure of its kind, half out of frame, its
    numerals disagreeing with its shape, unsure of its face, or read."""
    box = c.box(*size)
    if shape.p < settings.kind_min:
        if shape.none >= settings.min_die_prob:
            return None
        return Unreadable(box, f"unsure of its kind: {shape.kind}? ({shape.p:.2f})")
    if out_of_frame(c, *size, settings.edge_margin):
        return Unreadable(box, "half out of frame", shape.kind)
    read = read_face(frame, *at, shape.kind)
    first, second = read.faces[0], read.faces[1]
    pair = (first.value, second.value)
    kind = first.kind
    if read.elsewhere is not None and read.elsewhere.score - first.score >= settings.numeral_lead:
        said = face_text(read.elsewhere.kind, read.elsewhere.value)
        reason = f"its shape says {shape.kind} ({shape.p:.2f}), its numerals say {said}"
        return Unreadable(box, reason, kind, pair)
    if read.lead >= settings.numeral_lead:
        return DieRead(kind, first.value, box, round(_confidence(read, shape), 4))
    reason = f"unsure: {kind} {first.value} or {second.value} ({read.lead:.2f} nats apart)"
    return Unreadable(box, reason, kind, pair)


def _confidence(read: FaceRead, shape: Shape) -> float:
    """Return a read's confidence: its face's share of the faces' likelihood, times its kind's."""
    return min(1.0, read.confidence * shape.p)


def look(
    work: np.ndarray, candidates: list[Candidate], turns: tuple[float, ...], model: Path = MODEL
) -> NetOutput:
    """Run the numeral net on each candidate at each turn; average per candidate (a taught
    profile matches dice by the net's embeddings)."""
    size = crop_size(model)
    crops = [face_crop(work, c.x, c.y, c.side * MARGIN, t, size) for c in candidates for t in turns]
    if not crops:
        return run_numerals(np.zeros((0, size, size, 3), np.uint8), model)
    out = run_numerals(np.stack(crops), model)
    n, k = len(candidates), len(turns)
    emb = out.embeddings.reshape(n, k, -1).mean(axis=1)
    emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-9)
    return NetOutput(out.probs.reshape(n, k, -1).mean(axis=1), emb)


def as_taught(
    c: Candidate, match: Match | None, verdict: Verdict, size: tuple[int, int]
) -> Verdict:
    """Return a taught face for a die close to one in the table's profile, else the verdict."""
    if match is None:
        return verdict
    kind, value = match.label.split(":")
    return DieRead(kind, int(value), c.box(*size), round(match.similarity, 4))
