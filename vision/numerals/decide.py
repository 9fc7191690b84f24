"""Tell each candidate's kind by the kind net and read numeral faces by the recogniser; pip d6
are left to the d6 reader.

Kinds and faces are read from the frame at the camera's resolution: the finder works on the
small copy, and each die is cut from the full frame where it found it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tidetower.engine.tray import Box, DieRead, Unreadable
from tidetower.vision.colours import body_colour, lab_of
from tidetower.vision.d6.decide import Verdict, out_of_frame, verdicts
from tidetower.vision.d6.find import Candidate
from tidetower.vision.d6.nets import face_crop
from tidetower.vision.kinds import face_text
from tidetower.vision.numerals.faces import FaceRead, read_face
from tidetower.vision.numerals.kind import KIND_MODEL, kind_classes, read_kinds
from tidetower.vision.numerals.nets import MARGIN, MODEL, NetOutput, crop_size, run_numerals
from tidetower.vision.numerals.profile import Match
from tidetower.vision.numerals.signatures import TaughtFaces
from tidetower.vision.settings import ReaderSettings

TAUGHT_TURNS = (0.0,)
"""A taught profile matches a die by the numeral net's embedding of it at these turns."""
PIP_LIKE = ("none", "pips")
"""Kind-net classes the d6 reader judges: a pip d6, or maybe no die at all."""


SURE = 1.0
"""A first look settles a face when it leads by this much more than `numeral_lead`: the
turns between can still move a lead, by less than this (numerals-taught, renders)."""
RIVAL = 0.15
"""A numeral kind the kind net gives this much is read too when the likeliest is unsure."""


@dataclass(frozen=True)
class Shape:
    """What the kind net says of one candidate: its likeliest class and that class's share,
    and the other numeral kinds it thinks worth reading too."""

    kind: str
    p: float
    none: float
    rivals: tuple[tuple[str, float], ...] = ()
    pips: float = 0.0

    def maybe_pips(self, kind_min: float) -> bool:
        """Return whether the d6 reader should judge this candidate: the net calls it a pip
        d6 or no die, or it is unsure of a numeral kind, or calls it a numeral d6 (the one
        shape that comes with pips too), with a pip d6 its rival."""
        rival = self.pips >= RIVAL
        return self.kind in PIP_LIKE or (rival and (self.p < kind_min or self.kind == "d6"))


def shapes_of(probs: np.ndarray, classes: tuple[str, ...]) -> list[Shape]:
    """Return each candidate's likeliest kind-net class and its numeral rivals."""
    out = []
    for row in probs:
        order = [int(i) for i in np.argsort(row)[::-1]]
        best = order[0]
        rivals = tuple(
            (classes[i], float(row[i]))
            for i in order[1:3]
            if row[i] >= RIVAL and classes[i] not in PIP_LIKE
        )
        none = float(row[classes.index("none")])
        pips = float(row[classes.index("pips")])
        out.append(Shape(classes[best], float(row[best]), none, rivals, pips))
    return out


def net_of(settings: ReaderSettings) -> Path:
    """Return the numeral net a taught profile matches with: the shipped one unless named."""
    return Path(settings.numeral_net) if settings.numeral_net else MODEL


def kind_net_of(settings: ReaderSettings) -> Path:
    """Return the kind net the settings ask for: the shipped one unless another is named."""
    return Path(settings.kind_net) if settings.kind_net else KIND_MODEL


def judge_all(
    frame: np.ndarray,
    work: np.ndarray,
    candidates: list[Candidate],
    settings: ReaderSettings,
    taught: TaughtFaces | None = None,
) -> list[Verdict]:
    """Judge every candidate: its shape by the kind net, then pips or numerals as it says;
    a numeral die near a taught face's signature reads as that face."""
    if not settings.numerals:
        return verdicts(work, candidates, settings)
    scale = frame.shape[1] / work.shape[1]
    at = [(c.x * scale, c.y * scale, c.side * scale) for c in candidates]
    net = kind_net_of(settings)
    shapes = shapes_of(read_kinds(frame, at, net), kind_classes(net))
    pip_like = [i for i, s in enumerate(shapes) if s.maybe_pips(settings.kind_min)]
    out: list[Verdict] = [None] * len(candidates)
    d6 = verdicts(work, [candidates[i] for i in pip_like], settings)
    for i, verdict in zip(pip_like, d6, strict=True):
        out[i] = verdict
    size = (work.shape[1], work.shape[0])
    for i, shape in enumerate(shapes):
        if shape.kind in PIP_LIKE:
            continue
        pips = out[i]
        if isinstance(pips, DieRead) and shape.p < settings.kind_min:
            continue
        die = Die(frame, work, candidates[i], at[i], size, settings.numeral_lead + SURE)
        numeral = judge_numeral(die, shape, settings, taught)
        # a d6 the recogniser cannot read but the pip reader can is a pip d6
        out[i] = pips if isinstance(pips, DieRead) and not isinstance(numeral, DieRead) else numeral
    return out


@dataclass(frozen=True)
class Die:
    """One candidate to judge: the frame it is read from, the work image it was found in,
    where it is in each, and the work image's size."""

    frame: np.ndarray
    work: np.ndarray
    c: Candidate
    at: tuple[float, float, float]
    size: tuple[int, int]
    sure: float = float("inf")
    """A first look whose best face leads by this many nats needs no second."""

    @property
    def box(self) -> Box:
        """Return the die's normalised box."""
        return self.c.box(*self.size)

    def read(self, kind: str) -> FaceRead:
        """Read the die's face as a die of this kind."""
        return read_face(self.frame, *self.at, kind, self.sure)


def judge_numeral(
    die: Die, shape: Shape, settings: ReaderSettings, taught: TaughtFaces | None = None
) -> Verdict:
    """Decide a candidate of a numeral shape: unsure of its kind, half out of frame, a taught
    face, its numerals disagreeing with its shape, unsure of its face, or read."""
    sure = shape.p >= settings.kind_min
    if out_of_frame(die.c, *die.size, settings.edge_margin):
        return Unreadable(die.box, "half out of frame", shape.kind if sure else None)
    if not sure:
        return settled_kind(die, shape, settings)
    read = die.read(shape.kind)
    if taught is not None:
        colour = lab_of(body_colour(die.work, die.box))
        read = taught.corrected(shape.kind, read, colour) or read
    first, second = read.faces[0], read.faces[1]
    pair = (first.value, second.value)
    if read.elsewhere is not None and read.elsewhere.score - first.score >= settings.numeral_lead:
        said = face_text(read.elsewhere.kind, read.elsewhere.value)
        reason = f"its shape says {shape.kind} ({shape.p:.2f}), its numerals say {said}"
        return Unreadable(die.box, reason, first.kind, pair)
    if read.lead >= settings.numeral_lead:
        return DieRead(first.kind, first.value, die.box, round(_confidence(read, shape.p), 4))
    if second.kind == first.kind:
        hesitation = f"{first.kind} {first.value} or {second.value}"
    else:  # a d10 shape: units or tens
        hesitation = f"{first.kind} {face_text(first.kind, first.value)} or {second.kind} " + (
            face_text(second.kind, second.value)
        )
    reason = f"unsure: {hesitation} ({read.lead:.2f} nats apart)"
    return Unreadable(die.box, reason, first.kind, pair)


def settled_kind(die: Die, shape: Shape, settings: ReaderSettings) -> Verdict:
    """Decide a die whose shape is unsure between kinds by its numerals: read as each kind,
    a face only one of them prints (a 17: a d20, not a d8) settles it; otherwise it is
    unreadable, unsure of its kind."""
    unsure = Unreadable(die.box, f"unsure of its kind: {shape.kind}? ({shape.p:.2f})")
    if shape.none >= settings.min_die_prob:
        return None
    kinds = [(shape.kind, shape.p), *shape.rivals]
    if len(kinds) < 2:
        return unsure
    reads = {kind: die.read(kind) for kind, _ in kinds}
    best_kind, best_p = max(kinds, key=lambda k: reads[k[0]].faces[0].score)
    read = reads[best_kind]
    first = read.faces[0]
    text = face_text(first.kind, first.value)
    rivals = [k for k, _ in kinds if k != best_kind]
    printed_elsewhere = any(
        text in {face_text(f.kind, f.value) for f in reads[k].faces} for k in rivals
    )
    lead = min(read.lead, first.score - max(reads[k].faces[0].score for k in rivals))
    if printed_elsewhere or lead < settings.numeral_lead:
        return unsure
    return DieRead(first.kind, first.value, die.box, round(_confidence(read, best_p), 4))


def _confidence(read: FaceRead, kind_p: float) -> float:
    """Return a read's confidence: its face's share of the faces' likelihood, times its kind's."""
    return min(1.0, read.confidence * kind_p)


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
