"""A die's own face reader: its taught photos matched by local features and a geometric check.

Nothing is learned: each taught photo keeps its SIFT keypoints, and a die on the tray is
matched against every one of them. Matches that one similarity transform explains (RANSAC)
count; the face whose photos explain the most wins. Around its top face a die shows the
same neighbours every throw, so the whole constellation is matched, not one numeral.

A face is answered only when it leads the runner-up face by the die's own `lead` and has
at least the die's own `least` matches: both are found by reading every taught photo
against the others (`calibrated`), never on the photos a benchmark scores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import cv2
import numpy as np

from tidetower.engine.tray import Box

SIDE = 128
"""Every die is matched as a SIDE x SIDE crop: its box, squared, at one scale."""
RATIO = 0.8
"""Lowe's ratio test: a keypoint matches only if clearly nearer one taught keypoint."""
REPROJECTION = SIDE * 0.04
"""How far (px) a matched keypoint may land from where the transform puts it."""
SCALES = (0.7, 1.4)
"""A die is the same size every throw: a match at another scale is a coincidence."""
LEAST = 8
"""The fewest agreeing matches any answer needs, whatever the taught photos say."""
LEAD = 1.5
"""The least lead over the runner-up face, as a ratio, whatever the taught photos say."""
MOST_LEAD = 3.0
"""A calibration asking more than this lead is capped: the die would never answer."""
KEYPOINTS = 120
"""Keypoints kept per photo (the strongest): enough for a die's numerals at 128 px."""
FAR = 1e4
"""A padding descriptor's every value: nothing matches it."""
PER_FACE = 8
"""Taught photos kept per face: more add little and cost time on every read."""

_sift = cv2.SIFT.create(nfeatures=KEYPOINTS)
_clahe = cv2.createCLAHE(2.0, (4, 4))
_yy, _xx = np.mgrid[0:SIDE, 0:SIDE]
_DISC = ((((_xx - SIDE / 2) ** 2 + (_yy - SIDE / 2) ** 2) < (SIDE / 2) ** 2) * 255).astype(np.uint8)


def die_crop(frame: np.ndarray, box: Box) -> np.ndarray:
    """Return a die's box in a BGR frame, squared about its centre, as SIDE x SIDE pixels."""
    h, w = frame.shape[:2]
    x0, y0, x1, y1 = box[0] * w, box[1] * h, box[2] * w, box[3] * h
    side = max(x1 - x0, y1 - y0, 1.0)
    k = SIDE / side
    shift = np.array(
        [[k, 0, SIDE / 2 - (x0 + x1) / 2 * k], [0, k, SIDE / 2 - (y0 + y1) / 2 * k]], np.float32
    )
    shrink = cv2.INTER_AREA if side > SIDE else cv2.INTER_LINEAR
    return np.asarray(
        cv2.warpAffine(frame, shift, (SIDE, SIDE), flags=shrink, borderMode=cv2.BORDER_REPLICATE)
    )


@dataclass(frozen=True)
class Keys:
    """One photo's keypoints (N, 2) and their SIFT descriptors (N, 128)."""

    points: np.ndarray
    descriptors: np.ndarray


def keys_of(crop: np.ndarray) -> Keys:
    """Return a crop's keypoints inside the die's disc, on contrast-levelled grey."""
    grey = _clahe.apply(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY))
    found, descriptors = _sift.detectAndCompute(grey, _DISC)
    if descriptors is None or not found:
        return Keys(np.zeros((0, 2), np.float32), np.zeros((0, 128), np.float32))
    return Keys(np.array([k.pt for k in found], np.float32), descriptors)


@dataclass(frozen=True)
class Pool:
    """Every taught photo's keypoints side by side, padded, so one product of matrices
    finds each keypoint's two nearest in every photo at once."""

    descriptors: np.ndarray
    """(photos, KEYPOINTS, 128), padding far from every descriptor."""
    points: np.ndarray
    """(photos, KEYPOINTS, 2)."""

    @classmethod
    def of(cls, keys: tuple[Keys, ...]) -> Pool:
        """Stack the photos' keypoints, each photo padded to KEYPOINTS."""
        descriptors = np.full((len(keys), KEYPOINTS, 128), FAR, np.float32)
        points = np.zeros((len(keys), KEYPOINTS, 2), np.float32)
        for at, one in enumerate(keys):
            n = min(len(one.descriptors), KEYPOINTS)
            descriptors[at, :n], points[at, :n] = one.descriptors[:n], one.points[:n]
        return cls(descriptors, points)

    def agreeing(self, die: Keys) -> list[int]:
        """Return, per taught photo, the die's keypoints that match it under one similarity."""
        if len(die.descriptors) < 3 or len(self.descriptors) == 0:
            return [0] * len(self.descriptors)
        ours = die.descriptors.astype(np.float32)
        flat = self.descriptors.reshape(-1, 128)
        near = (ours**2).sum(1)[:, None] + (flat**2).sum(1)[None, :] - 2 * ours @ flat.T
        near = np.maximum(near, 0).reshape(len(ours), len(self.descriptors), KEYPOINTS)
        order = np.argpartition(near, 1, axis=2)[:, :, :2]
        two = np.take_along_axis(near, order, axis=2)
        first = np.where(two[:, :, 0] <= two[:, :, 1], order[:, :, 0], order[:, :, 1])
        good = np.sqrt(two.min(axis=2)) < RATIO * np.sqrt(two.max(axis=2))
        return [self._consensus(die, first[:, at], good[:, at], at) for at in range(len(good[0]))]

    def _consensus(self, die: Keys, nearest: np.ndarray, good: np.ndarray, at: int) -> int:
        """Return how many good matches with photo `at` one similarity transform explains."""
        if int(good.sum()) < 3:
            return 0
        moved, inliers = cv2.estimateAffinePartial2D(
            die.points[good],
            self.points[at, nearest[good]],
            method=cv2.RANSAC,
            ransacReprojThreshold=REPROJECTION,
        )
        if moved is None or not SCALES[0] < float(np.hypot(moved[0, 0], moved[1, 0])) < SCALES[1]:
            return 0
        return int(inliers.sum())


@dataclass(frozen=True)
class FaceMatch:
    """What a die's own reader makes of a crop: each face's best score, best first, and the
    face it answers (None: it does not lead clearly enough to be said)."""

    ranked: tuple[tuple[int, int], ...]
    face: int | None

    @property
    def score(self) -> int:
        """The best face's agreeing matches: how sure this die is of itself."""
        return self.ranked[0][1] if self.ranked else 0

    @property
    def likeliest(self) -> tuple[int, ...]:
        """The two faces it hesitated between, likeliest first."""
        return tuple(face for face, _ in self.ranked[:2])


@dataclass(frozen=True)
class FaceMatcher:
    """A die's taught photos as keypoints, with the lead and matches an answer needs."""

    faces: tuple[int, ...]
    keys: tuple[Keys, ...]
    least: int = LEAST
    lead: float = LEAD
    all_faces: tuple[int, ...] = field(default=())

    def scores(self, die: Keys, skip: int = -1) -> dict[int, int]:
        """Return each face's best agreeing matches over its taught photos (but `skip`)."""
        best = dict.fromkeys(self.all_faces or self.faces, 0)
        for at, (face, agree) in enumerate(zip(self.faces, self.pool.agreeing(die), strict=True)):
            if at != skip:
                best[face] = max(best[face], agree)
        return best

    @cached_property
    def pool(self) -> Pool:
        """The taught photos' keypoints stacked for matching all at once."""
        return Pool.of(self.keys)

    def judge(self, scores: dict[int, int]) -> FaceMatch:
        """Answer the best face only if it has `least` matches and leads by `lead`."""
        ranked = tuple(sorted(scores.items(), key=lambda fs: -fs[1]))
        if not ranked:
            return FaceMatch((), None)
        best = ranked[0][1]
        runner = ranked[1][1] if len(ranked) > 1 else 0
        sure = best >= self.least and best >= self.lead * max(runner, 1)
        return FaceMatch(ranked, ranked[0][0] if sure else None)


def taught_matcher(
    crops: list[np.ndarray], faces: list[int], all_faces: tuple[int, ...]
) -> FaceMatcher:
    """Return a die's reader from its taught crops, at most PER_FACE a face, calibrated."""
    kept: dict[int, list[int]] = {}
    for at, face in enumerate(faces):
        kept.setdefault(face, []).append(at)
    chosen = [at for ats in kept.values() for at in _spread(ats, PER_FACE)]
    matcher = FaceMatcher(
        tuple(faces[at] for at in chosen),
        tuple(keys_of(crops[at]) for at in chosen),
        all_faces=all_faces,
    )
    return calibrated(matcher)


def _spread(items: list[int], most: int) -> list[int]:
    """Return at most `most` of the items, evenly spread over them."""
    if len(items) <= most:
        return items
    return [items[round(i * (len(items) - 1) / (most - 1))] for i in range(most)]


def calibrated(matcher: FaceMatcher) -> FaceMatcher:
    """Raise the lead until every taught photo, read against the others, is right or
    unanswered: the die's own photos set how sure it must be (capped at MOST_LEAD)."""
    lead = LEAD
    for at, (face, keys) in enumerate(zip(matcher.faces, matcher.keys, strict=True)):
        scores = matcher.scores(keys, skip=at)
        ranked = sorted(scores.items(), key=lambda fs: -fs[1])
        best_face, best = ranked[0]
        runner = ranked[1][1] if len(ranked) > 1 else 0
        if best_face != face and best >= LEAST:
            lead = max(lead, best / max(runner, 1) + 0.05)
    return FaceMatcher(matcher.faces, matcher.keys, LEAST, min(lead, MOST_LEAD), matcher.all_faces)
