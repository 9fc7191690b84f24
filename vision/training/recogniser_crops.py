"""Dice crops for tuning the numeral recogniser (`recogniser_tune`).

`python -m tidetower.vision.training.recogniser_crops OUT.npz`. Each real numeral die
(dice-values, found by the shipped finder in a tower-sized frame as `kind_crops` finds it;
numerals-taught, by its box) is cut as a square `SPAN` die sides wide around its centre, at
`SIZE` pixels, and kept as a JPEG with its kind, face, the texts each face of its shape may
read as, the window the reader cuts (`faces.WINDOW`), its fold and pose. `recogniser_tune`
reads the file where no tidetower is installed, so everything it needs is in it. No torch.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import cv2
import numpy as np

from tidetower.vision.kinds import face_text, face_values
from tidetower.vision.numerals.faces import FAMILY, TURNS, WINDOW, texts
from tidetower.vision.progress import progress
from tidetower.vision.score import load_labels
from tidetower.vision.training.kind_crops import DATA, boxed, close_up_die, family

SPAN = 1.2
"""A crop spans this many die sides: the reader's window at every turn, and room to shift."""
SIZE = 128
"""A crop's side in pixels."""


@dataclass(frozen=True)
class Die:
    """One labelled die where the finder (or its box) puts it."""

    image: np.ndarray
    x: float
    y: float
    side: float
    kind: str
    value: int
    fold: str
    pose: str


def dice_values(folder: Path = DATA / "dice-values") -> Iterator[Die]:
    """Yield the dice-values dice the finder finds, each with its fold and pose."""
    labels = json.loads((folder / "labels.json").read_text())
    meta = json.loads((folder / "meta.json").read_text())
    with progress(sorted(labels), "dice-values") as names:
        for name in names:
            photo = cv2.imread(str(folder / "images" / name))
            die = close_up_die(photo) if photo is not None else None
            if photo is None or die is None:
                continue
            group, label = meta[name]["group"], labels[name]
            pose = f"{group}/{meta[name]['pose']}"
            kind, value = label["die"], label["value"]
            yield Die(photo, die.x, die.y, die.side, kind, value, family(group), pose)


def numerals_taught(folder: Path = DATA / "numerals-taught") -> Iterator[Die]:
    """Yield numerals-taught's dice by their boxes: one set, a fold of its own."""
    for item in load_labels(folder):
        image = cv2.imread(str(item.path))
        if image is None:
            continue
        for d in item.dice:
            yield Die(image, *boxed(image, d.box), d.die, d.value, "taught", item.path.stem)


def crop(die: Die) -> bytes:
    """Cut the die's square, SPAN sides wide, at SIZE pixels, as a JPEG."""
    scale = SIZE / (die.side * SPAN)
    m = np.array(
        [[scale, 0, SIZE / 2 - scale * die.x], [0, scale, SIZE / 2 - scale * die.y]], np.float32
    )
    square = cv2.warpAffine(
        die.image, m, (SIZE, SIZE), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE
    )
    ok, jpeg = cv2.imencode(".jpg", square, [cv2.IMWRITE_JPEG_QUALITY, 92])
    assert ok
    return jpeg.tobytes()


def faces_of(kind: str) -> list[dict[str, object]]:
    """Return every face the die's shape may show, with the texts each may read as."""
    return [
        {"kind": k, "value": v, "texts": list(texts(k, v))}
        for k in FAMILY.get(kind, (kind,))
        for v in face_values(k)
    ]


def record(die: Die) -> dict[str, object]:
    """Return what the tuner needs of one die, beside its crop."""
    return {
        "kind": die.kind,
        "value": die.value,
        "text": face_text(die.kind, die.value),
        "window": WINDOW.get(die.kind, 0.4),
        "fold": die.fold,
        "pose": die.pose,
        "faces": faces_of(die.kind),
    }


def main(out: Path) -> None:
    """Write every die's crop and record to one .npz."""
    jpegs, records = [], []
    for die in chain(dice_values(), numerals_taught()):
        jpegs.append(np.frombuffer(crop(die), np.uint8))
        records.append(record(die))
    ends = np.cumsum([len(j) for j in jpegs])
    meta = {"span": SPAN, "size": SIZE, "turns": list(TURNS), "dice": records}
    np.savez(
        out,
        jpegs=np.concatenate(jpegs),
        ends=ends,
        meta=np.frombuffer(json.dumps(meta).encode(), np.uint8),
    )
    print(f"{out}: {len(records)} dice, {out.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
