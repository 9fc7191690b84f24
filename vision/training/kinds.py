"""Train the kind net on real photos of many makers' dice and renders, and export it to ONNX.

Usage: python -m tidetower.vision.training.kinds CROPS.npz --out kinds.onnx [--holdout FOLD ...]
CROPS.npz is made by `python -m tidetower.vision.training.kind_crops CROPS.npz`. A fold held
out (dice-values' top, color, angle, wood; taught; synth; rune55; d6-tray) is never learned
from, and the net's `trained_on` metadata says so, so the benchmark reads each fold with a
net that never saw it. Needs the `train` extra (torch, onnx); never run on the Pi.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from tidetower.vision.numerals.kind import KIND_CLASSES, SIZE

EPOCHS = 8
BATCH = 128
PER_EPOCH = 20_000
"""Crops drawn (at random, without replacement) for each epoch: the sets are uneven in size,
and two cores cannot afford every crop every epoch."""
SWAP = 0.6
"""The share of real dice whose background is swapped for a made-up floor, each draw: in
dice-values every kind was filmed on its own backgrounds, so a net left to itself learns the
floor, not the die."""
REAL_FOLDS = ("top", "color", "angle", "wood", "taught")
"""Folds of real numeral dice photographed on their own floors."""


def matte(crop: np.ndarray) -> np.ndarray | None:
    """Return a die's mask in a crop (1 on the die), or None: the floor is what the crop's rim
    shows (three colours, for wood), the die the convex blob unlike it at the middle."""
    import cv2

    size = crop.shape[0]
    lab = cv2.cvtColor(cv2.GaussianBlur(crop, (3, 3), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
    ring = np.ones((size, size), bool)
    ring[3:-3, 3:-3] = False
    criteria = (cv2.TERM_CRITERIA_MAX_ITER, 10, 1.0)
    _, _, centres = cv2.kmeans(  # type: ignore[call-overload, unused-ignore]
        lab[ring], 3, None, criteria, 1, cv2.KMEANS_PP_CENTERS
    )
    distance = np.min(np.linalg.norm(lab[:, :, None, :] - centres[None, None], axis=3), axis=2)
    scaled = np.clip(distance * 3, 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(scaled, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    mask = cv2.morphologyEx(
        (scaled > max(otsu, 30)).astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)
    )
    count, labels = cv2.connectedComponents(mask)
    middle = labels[size // 2 - 3 : size // 2 + 3, size // 2 - 3 : size // 2 + 3].ravel()
    middle = middle[middle > 0]
    if count < 2 or len(middle) == 0:
        return None
    hull = cv2.convexHull(
        cv2.findNonZero((labels == np.bincount(middle).argmax()).astype(np.uint8))
    )
    out = np.zeros((size, size), np.uint8)
    cv2.fillConvexPoly(out, hull, 1)
    return out if 0.2 <= out.mean() <= 0.75 else None


def floor(size: int, rng: np.random.Generator) -> np.ndarray:
    """Return a made-up floor: plain, a gradient, felt or wood grain, of a random colour."""
    import cv2

    colour = rng.uniform(0, 255, 3)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) / size
    angle = rng.uniform(0, np.pi)
    along = np.cos(angle) * xx + np.sin(angle) * yy
    style = int(rng.integers(4))
    if style == 0:
        field = np.zeros((size, size), np.float32)
    elif style == 1:
        field = (along - 0.5) * rng.uniform(-80, 80)
    elif style == 2:
        noise = rng.normal(0, 1, (size, size)).astype(np.float32)
        field = cv2.GaussianBlur(noise, (0, 0), rng.uniform(0.7, 3)) * rng.uniform(10, 40)
    else:
        wobble = cv2.GaussianBlur(rng.normal(0, 1, (size, size)).astype(np.float32), (0, 0), 4)
        field = np.sin((along * rng.uniform(6, 25) + wobble * 2) * np.pi) * rng.uniform(8, 35)
    tint = rng.uniform(0.6, 1.0, 3)
    out = colour[None, None, :] + field[..., None] * tint[None, None, :]
    return np.clip(out + rng.normal(0, 3, out.shape), 0, 255).astype(np.float32)


def swap_floors(
    batch: np.ndarray, masks: list[np.ndarray | None], rng: np.random.Generator
) -> np.ndarray:
    """Lay each masked die of a batch on a made-up floor, SWAP of the time."""
    import cv2

    out = batch.astype(np.float32)
    for i, mask in enumerate(masks):
        if mask is None or rng.random() > SWAP:
            continue
        alpha = cv2.GaussianBlur(mask.astype(np.float32), (3, 3), 0)[..., None]
        out[i] = out[i] * alpha + floor(batch.shape[1], rng) * (1 - alpha)
    return out


def build_net():  # type: ignore[no-untyped-def]
    """Return the kind net: four strided stages of 3x3 convolutions, pooled, one linear layer."""
    from torch import nn

    def stage(cin: int, cout: int, stride: int) -> list[nn.Module]:
        return [
            nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        ]

    return nn.Sequential(
        *stage(3, 16, 2),
        *stage(16, 32, 2),
        *stage(32, 64, 2),
        *stage(64, 96, 2),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(96, len(KIND_CLASSES)),
    )


def augment(
    batch: np.ndarray, masks: list[np.ndarray | None], rng: np.random.Generator
) -> np.ndarray:
    """Vary floor, light, colour, blur and noise: other towers, cameras and plastics (turns
    are in the crops)."""
    import cv2

    x = swap_floors(batch, masks, rng)
    for i in np.nonzero(rng.random(len(x)) < 0.3)[0]:
        x[i] = cv2.GaussianBlur(x[i], (0, 0), rng.uniform(0.5, 1.5))
    n = len(x)
    perm = rng.permuted(np.tile(np.arange(3), (n, 1)), axis=1)
    x = np.take_along_axis(x, perm[:, None, None, :], axis=3)
    grey = rng.random(n) < 0.25
    x[grey] = x[grey].mean(axis=3, keepdims=True)
    gain = rng.uniform(0.6, 1.4, (n, 1, 1, 3)) * rng.uniform(0.7, 1.3, (n, 1, 1, 1))
    x = (x - 128) * rng.uniform(0.7, 1.3, (n, 1, 1, 1)) + 128
    x = x * gain + rng.normal(0, rng.uniform(0, 8, (n, 1, 1, 1)), x.shape)
    flip = rng.random(n) < 0.5
    x[flip] = x[flip, :, ::-1]
    return np.clip(x, 0, 255)


def mattes(crops: dict[str, np.ndarray], cache: Path) -> list[np.ndarray | None]:
    """Return each real numeral die's mask (None elsewhere), kept beside the crops once made."""
    if cache.exists():
        saved = np.load(cache)
        return [m if ok else None for m, ok in zip(saved["masks"], saved["ok"], strict=True)]
    real = np.isin(crops["folds"], REAL_FOLDS)
    found = [matte(image) if r else None for image, r in zip(crops["images"], real, strict=True)]
    size = crops["images"].shape[1]
    blank = np.zeros((size, size), np.uint8)
    masks = np.stack([blank if m is None else m for m in found])
    np.savez_compressed(cache, masks=masks, ok=np.array([m is not None for m in found]))
    return found


def train(  # type: ignore[no-untyped-def]
    crops: dict[str, np.ndarray], all_masks: list[np.ndarray | None], holdout: list[str], seed: int
):
    """Train a kind net on every crop outside the held-out folds."""
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    keep = ~np.isin(crops["folds"], holdout)
    images, labels = crops["images"][keep], crops["labels"][keep]
    masks = [m for m, k in zip(all_masks, keep, strict=True) if k]
    counts = np.bincount(labels, minlength=len(KIND_CLASSES)).astype(np.float64)
    weights = torch.tensor(np.where(counts > 0, counts.sum() / np.maximum(counts, 1), 0) ** 0.5)
    net = build_net()
    per_epoch = min(PER_EPOCH, len(labels))
    steps = EPOCHS * (per_epoch // BATCH)
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=steps)
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights.float(), label_smoothing=0.05)
    net.train()
    for epoch in range(EPOCHS):
        order, total = rng.permutation(len(labels))[:per_epoch], 0.0
        for i in range(per_epoch // BATCH):
            idx = order[i * BATCH : (i + 1) * BATCH]
            batch = augment(images[idx], [masks[j] for j in idx], rng)
            x = torch.from_numpy(batch / 64.0 - 2.0).permute(0, 3, 1, 2)
            loss = loss_fn(net(x.float()), torch.from_numpy(labels[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach())
        print(f"epoch {epoch + 1}/{EPOCHS}: loss {total / max(1, per_epoch // BATCH):.3f}")
    return net.eval()


def export(net, out: Path, holdout: list[str]) -> None:  # type: ignore[no-untyped-def]
    """Write the net to ONNX with its classes and what it learned from in the metadata."""
    import onnx
    import torch

    dummy = torch.zeros(1, 3, SIZE, SIZE)
    torch.onnx.export(
        net,
        dummy,
        str(out),
        input_names=["crops"],
        output_names=["logits"],
        dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}},
        opset_version=17,
        dynamo=False,
    )
    model = onnx.load(str(out))
    said = {"classes": json.dumps(KIND_CLASSES), "trained_on": "all but " + "+".join(holdout)}
    for key, value in said.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, str(out))


def main() -> None:
    """Train one kind net from the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("crops", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--holdout", action="append", default=[])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    crops = dict(np.load(args.crops))
    masks = mattes(crops, args.crops.with_suffix(".masks.npz"))
    net = train(crops, masks, args.holdout, args.seed)
    export(net, args.out, args.holdout or ["nothing"])


if __name__ == "__main__":
    main()
