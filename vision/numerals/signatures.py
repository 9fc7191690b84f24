"""A taught die's faces as the recogniser reads them: one signature per taught photo.

A signature is the recogniser's log-likelihood of every face the die's kind prints, summed
over turns (so it does not change as the die turns) and made relative to the best. It says
what the die's own font does to the recogniser: a 7 that reads a little like a 1, an 11 it
under-scores against the 1. From the taught photos of one die (its kind and colour) a bias
per face is learned, the one that reads the taught photos best; a new die of that kind and
colour is read with its faces' scores so corrected. The reader's own rule (the best face
must lead the next) still decides, so a die the correction leaves unsure still goes to the GM.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tidetower.engine.files import regular_file
from tidetower.vision.kinds import face_values
from tidetower.vision.numerals.faces import FAMILY, Face, FaceRead

FILE = "faces.npz"
FLOOR = -12.0
"""Log-likelihoods below this (relative to the best face) are all alike: far off."""
RIDGE = 0.3
"""How hard the per-face bias is held toward none (L2): with one photo a
face, a free bias would read those photos right and nothing else. Chosen on synthetic
teach sets (seeds 8,000,000+), apart from the benchmark's and the tests'."""
STEPS = 300
SAME_COLOUR = 30.0
"""A taught die's faces are matched only on dice of its colour (Lab units between bodies)."""


def family_of(kind: str) -> str:
    """Return the name of the faces a kind's shape shares (d10 and d10-tens: one shape)."""
    return "+".join(FAMILY.get(kind, (kind,)))


def faces_of(family: str) -> list[tuple[str, int]]:
    """Return the (kind, value) of every face a family prints, in a fixed order."""
    return [(kind, value) for kind in family.split("+") for value in face_values(kind)]


def signature(read: FaceRead, family: str) -> np.ndarray:
    """Return a read's signature: each face's score relative to the best, floored."""
    scores = {(f.kind, f.value): f.score for f in read.faces}
    vector = np.asarray([scores.get(face, -np.inf) for face in faces_of(family)], np.float64)
    return np.asarray(np.maximum(vector - vector.max(), FLOOR))


@dataclass(frozen=True)
class TaughtFaces:
    """Signatures of taught photos: each row's family, face label, body colour and vector."""

    families: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    colours: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    vectors: tuple[np.ndarray, ...] = ()

    def extended(
        self, family: str, label: str, colour: np.ndarray, vector: np.ndarray
    ) -> TaughtFaces:
        """Return these faces and one more taught photo's."""
        return TaughtFaces(
            (*self.families, family),
            (*self.labels, label),
            np.concatenate([self.colours, np.asarray(colour, np.float64)[None]]),
            (*self.vectors, vector),
        )

    def corrected(self, kind: str, read: FaceRead, colour: np.ndarray) -> FaceRead | None:
        """Return a read with its faces' scores corrected by the bias learned from the taught
        photos of this kind and colour, likeliest first; None when none was taught."""
        family = family_of(kind)
        rows = [
            i
            for i, f in enumerate(self.families)
            if f == family and np.linalg.norm(self.colours[i] - colour) <= SAME_COLOUR
        ]
        if not rows:
            return None
        faces = faces_of(family)
        truth = [faces.index(_face(self.labels[i])) for i in rows]
        bias = face_bias(np.stack([self.vectors[i] for i in rows]), np.asarray(truth))
        scores = {(f.kind, f.value): f.score for f in read.faces}
        fixed = [
            Face(k, v, scores[(k, v)] + float(b))
            for (k, v), b in zip(faces, bias, strict=True)
            if (k, v) in scores
        ]
        return FaceRead(tuple(sorted(fixed, key=lambda f: f.score, reverse=True)), read.elsewhere)

    def save(self, folder: Path) -> None:
        """Write the signatures beside the profile's other files."""
        width = max((len(v) for v in self.vectors), default=0)
        padded = np.full((len(self.vectors), width), FLOOR)
        for i, v in enumerate(self.vectors):
            padded[i, : len(v)] = v
        np.savez(
            folder / FILE,
            families=np.array(self.families, dtype=str),
            labels=np.array(self.labels, dtype=str),
            colours=self.colours,
            vectors=padded,
        )


def _face(label: str) -> tuple[str, int]:
    kind, _, value = label.partition(":")
    return kind, int(value)


def face_bias(signatures: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Return the per-face bias that reads the taught signatures best (softmax cross-entropy,
    ridge-held toward zero), by plain gradient descent: a few dozen faces, a few photos."""
    bias = np.zeros(signatures.shape[1])
    rows = np.arange(len(truth))
    for _ in range(STEPS):
        z = signatures + bias
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        p[rows, truth] -= 1.0
        bias -= 0.1 * (p.sum(axis=0) + RIDGE * bias)
    return bias


MAX_FACES_BYTES = 16 << 20
"""A signature per taught face is kilobytes: a bigger file is no profile's."""


def load_faces(folder: Path) -> TaughtFaces:
    """Read a profile's signatures (none taught yet when the file is not there)."""
    path = folder / FILE
    if not path.exists():
        return TaughtFaces()
    with np.load(regular_file(path, MAX_FACES_BYTES)) as data:
        families = tuple(str(f) for f in data["families"])
        vectors = tuple(
            np.asarray(v[: len(faces_of(f))], np.float64)
            for f, v in zip(families, data["vectors"], strict=True)
        )
        return TaughtFaces(
            families,
            tuple(str(x) for x in data["labels"]),
            np.asarray(data["colours"], np.float64).reshape(-1, 3),
            vectors,
        )
