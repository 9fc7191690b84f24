"""Compare face readers on a fold of dev die by die, finer than the whole reader's tally can.

Usage: python bench/d6_face_views.py FACES.onnx [FACES.onnx ...] [--finder FINDER.onnx]
       [--fold a|b|c]
Each die of the fold (a, dev-val, by default) that the finder finds and that matches a label
is cut out in 8 seeded views (0 and 90 degrees, then six random turns) at every crop size
the given readers expect. For each reader, and for every ensemble of two or more of them,
prints the mean negative log likelihood of the true face, the share of single views read
wrong, and the reader's decision (right, wrong, unsure below 0.6) from one view, the
reader's two turns and all 8 views. A fold has only a handful of hard dice, so the
likelihood and the view errors tell readers apart where counts of right dice tie. Use
readers held out of the fold (`python -m tidetower.vision.training.d6 --holdout F`), and a
finder held out of it too with `--finder`.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import cv2
import numpy as np
import vision_d6

from tidetower.vision.d6 import nets
from tidetower.vision.d6.find import Candidate, find_dice
from tidetower.vision.progress import progress
from tidetower.vision.read import to_work_size
from tidetower.vision.score import DEV_FOLDS, Label, best_match
from tidetower.vision.settings import ReaderSettings

VIEWS = 8
SETTINGS = ReaderSettings()


def matched(
    candidates: list[Candidate], labels: tuple[Label, ...], w: int, h: int
) -> list[tuple[Candidate, int]]:
    """Return the candidates that match a label, one to one, with the label's face value."""
    free, out = list(range(len(labels))), []
    for c in sorted(candidates, key=lambda c: -c.heat):
        hit = best_match(c.box(w, h), labels, free)
        if hit is not None:
            free.remove(hit)
            out.append((c, labels[hit].value))
    return out


def views(sizes: set[int], fold: str) -> tuple[dict[int, np.ndarray], np.ndarray]:
    """Return (N * VIEWS) crops per size as model input blobs, and the N true faces."""
    rng = np.random.default_rng(0)
    crops: dict[int, list[np.ndarray]] = {s: [] for s in sizes}
    faces = []
    with progress(vision_d6.real("devval", fold), f"cutting fold {fold}") as photos:
        for path, labels in photos:
            work = to_work_size(cv2.imread(str(path)), SETTINGS.work_size)
            h, w = work.shape[:2]
            for c, value in matched(find_dice(work, SETTINGS), labels, w, h):
                faces.append(value)
                turns = [0.0, 90.0, *rng.uniform(0, 360, VIEWS - 2)]
                for size, turn in itertools.product(sizes, turns):
                    side = c.side * nets.FACE_MARGIN
                    crops[size].append(nets.face_crop(work, c.x, c.y, side, float(turn), size))
    return {s: nets.to_blob(np.stack(v)) for s, v in crops.items()}, np.array(faces)


def probabilities(model: Path, blobs: dict[int, np.ndarray]) -> np.ndarray:
    """Return one reader's (N * VIEWS, 7) probabilities."""
    size = int(nets.load_session(model).get_inputs()[0].shape[2])
    return nets.reader_probabilities(model, blobs[size])


def decisions(p: np.ndarray, faces: np.ndarray) -> tuple[int, int, int]:
    """Return (right, wrong, unsure) for per-die probabilities, as the reader decides
    (without its damping by finder heat, which is the same for every reader)."""
    value = p[:, 1:].argmax(axis=1) + 1
    confidence = p[np.arange(len(p)), value] / np.maximum(1.0 - p[:, 0], 1e-6)
    sure = confidence >= SETTINGS.min_confidence
    return (
        int((sure & (value == faces)).sum()),
        int((sure & (value != faces)).sum()),
        int((~sure).sum()),
    )


def report(name: str, p: np.ndarray, faces: np.ndarray) -> str:
    """Return one line of figures for one reader or ensemble."""
    truth = np.repeat(faces, VIEWS)
    nll = -np.log(np.clip(p[np.arange(len(p)), truth], 1e-9, 1.0)).mean()
    wrong = (p[:, 1:].argmax(axis=1) + 1 != truth).mean()
    per_die = p.reshape(len(faces), VIEWS, 7)
    looks = [decisions(per_die[:, :k].mean(axis=1), faces) for k in (1, 2, VIEWS)]
    return (
        f"{name:36s} nll {nll:.4f}  views wrong {100 * wrong:.2f} %  right/wrong/unsure: "
        f"1 view {looks[0]}, 2 turns {looks[1]}, {VIEWS} views {looks[2]}"
    )


def main() -> None:
    """Score each reader and each ensemble of them on dev-val's dice."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("faces", type=Path, nargs="+")
    parser.add_argument("--finder", type=Path, default=None)
    parser.add_argument(
        "--fold",
        choices=sorted(DEV_FOLDS),
        default="a",
        help="the fold of dev to read (a is dev-val)",
    )
    args = parser.parse_args()
    if args.finder:
        vision_d6.use_models(args.finder.parent)
    sizes = {int(nets.load_session(m).get_inputs()[0].shape[2]) for m in args.faces}
    blobs, faces = views(sizes, args.fold)
    probs = {m: probabilities(m, blobs) for m in args.faces}
    print(f"{len(faces)} dice of fold {args.fold}, {VIEWS} views each")
    for k in range(1, len(args.faces) + 1):
        for group in itertools.combinations(args.faces, k):
            name = " + ".join(f"{m.parent.name}/{m.stem}" for m in group)
            mean = np.mean(np.stack([probs[m] for m in group]), axis=0)
            print(report(name, mean, faces), flush=True)


if __name__ == "__main__":
    main()
