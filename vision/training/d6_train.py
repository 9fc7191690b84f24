"""Train the d6 finder and the face readers (torch): `python -m tidetower.vision.training.d6`
runs this; see there for the options and the recipe."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np
import onnx
import torch
from torch import nn

from tidetower.vision.d6.nets import (
    FACE_MARGIN,
    FIND_STRIDE,
    face_crop,
    to_blob,
)
from tidetower.vision.progress import progress
from tidetower.vision.training.d6_data import (
    FACE_SIZE,
    FIND_SIZE,
    KINDS,
    MODELS,
    SYNTH_SEED,
    ZOOMED,
    learned_folds,
    photo_sets,
    synth_photos,
)
from tidetower.vision.training.d6_nets import DieFinder, FaceReader
from tidetower.vision.training.d6_paste import Cut, Photo, cut_dice, paste
from tidetower.vision.training.d6_quantize import CALIBRATION_SYNTH, calibration_photos, quantize


@dataclass(frozen=True)
class Photos:
    """Training photos: real sets and synthetic ones, drawn with a fixed share of real ones,
    each real set as often as the others however many photos it holds."""

    real: list[list[Photo]]
    synth: list[Photo]
    real_share: float
    paste_share: float = 0.0
    """Share of real draws that get more real dice of their own set pasted in (d6_paste)."""
    cuts: list[list[Cut]] = field(default_factory=list)

    def draw(self, rng: np.random.Generator) -> Photo:
        """Return one photo: a real one with probability real_share."""
        if self.synth and rng.random() >= self.real_share:
            return self.synth[int(rng.integers(len(self.synth)))]
        k = int(rng.integers(len(self.real)))
        photo = self.real[k][int(rng.integers(len(self.real[k])))]
        if self.cuts and rng.random() < self.paste_share:
            return paste(rng, photo, self.cuts[k], int(rng.integers(1, 7)))
        return photo


STRONG = False
"""--aug strong: wider scale/offset jitter, per-channel gain, gamma, grey, more blur."""
FAINT = 0.0
"""--faint SHARE: share of face crops whose contrast is cut to 0.5-0.75, so faint pips
(dark marbled dice with red pips, gold on red) are seen in training."""


def photometric(rng: np.random.Generator, image: np.ndarray) -> np.ndarray:
    """Jitter colour, brightness, contrast, blur and noise so the nets see many cameras."""
    if STRONG:
        return photometric_strong(rng, image)
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV).astype(np.int16)
    hsv[..., 0] = (hsv[..., 0] + int(rng.integers(-12, 13))) % 180
    hsv[..., 1] = np.clip(hsv[..., 1] * rng.uniform(0.7, 1.3), 0, 255)
    img = cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR).astype(np.float32)
    img = (img - 128) * rng.uniform(0.75, 1.25) + 128 + rng.uniform(-30, 30)
    if rng.random() < 0.3:
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.2)), np.float32)
    img += rng.normal(0, rng.uniform(0, 6), img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def photometric_strong(rng: np.random.Generator, image: np.ndarray) -> np.ndarray:
    """The stronger photometric jitter of --aug strong."""
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV).astype(np.int16)
    hsv[..., 0] = (hsv[..., 0] + int(rng.integers(-18, 19))) % 180
    hsv[..., 1] = np.clip(hsv[..., 1] * rng.uniform(0.5, 1.5), 0, 255)
    img = cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR).astype(np.float32)
    if rng.random() < 0.1:
        img[:] = img.mean(axis=2, keepdims=True)
    img *= rng.uniform(0.85, 1.15, 3)
    img = 255.0 * (np.clip(img, 0, 255) / 255.0) ** rng.uniform(0.7, 1.4)
    img = (img - 128) * rng.uniform(0.6, 1.4) + 128 + rng.uniform(-40, 40)
    if rng.random() < 0.4:
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.5)), np.float32)
    img += rng.normal(0, rng.uniform(0, 8), img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def finder_sample(rng: np.random.Generator, photo: Photo) -> tuple[np.ndarray, np.ndarray]:
    """Return an augmented finder input and its (3, S, S) target: heat, side, side weight."""
    image, centres, sides, _ = photo
    h, w = image.shape[:2]
    scale = FIND_SIZE / max(h, w) * rng.uniform(0.75, 1.35)
    m = np.asarray(cv2.getRotationMatrix2D((w / 2, h / 2), rng.uniform(0, 360), scale), float)
    m[:, 2] += FIND_SIZE / 2 - np.array([w / 2, h / 2]) + rng.uniform(-40, 40, 2) * FIND_SIZE / 256
    border = cv2.BORDER_REPLICATE if rng.random() < 0.5 else cv2.BORDER_CONSTANT
    img = cv2.warpAffine(
        image,
        m,
        (FIND_SIZE, FIND_SIZE),
        flags=cv2.INTER_AREA,
        borderMode=border,
        borderValue=(128, 128, 128),
    )
    pts = centres @ m[:, :2].T + m[:, 2]
    if rng.random() < 0.5:
        img, pts = img[:, ::-1].copy(), pts * [-1, 1] + [FIND_SIZE - 1, 0]
    return photometric(rng, img), heat_target(pts, sides * scale)


def heat_target(pts: np.ndarray, sides: np.ndarray) -> np.ndarray:
    """Gaussian peaks at die centres, and die side in cells around each centre."""
    s = FIND_SIZE // FIND_STRIDE
    yy, xx = np.mgrid[0:s, 0:s].astype(np.float32)
    target = np.zeros((3, s, s), np.float32)
    for (x, y), side in zip(pts / FIND_STRIDE, sides / FIND_STRIDE, strict=True):
        if not (0 <= x < s and 0 <= y < s):
            continue
        sigma = max(0.5, 0.15 * side)
        g = np.exp(-((xx - x) ** 2 + (yy - y) ** 2) / (2 * sigma**2))
        target[0] = np.maximum(target[0], g)
        target[0, min(int(y + 0.5), s - 1), min(int(x + 0.5), s - 1)] = 1.0
        near = (np.abs(xx - x) <= 1) & (np.abs(yy - y) <= 1)
        target[1][near], target[2][near] = side, 1.0
    return target


def focal(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """CenterNet focal loss on the centre heatmap."""
    p = torch.sigmoid(logits).clamp(1e-4, 1 - 1e-4)
    pos = target >= 1.0
    pos_loss = -((1 - p) ** 2 * torch.log(p))[pos].sum()
    neg_loss = -((1 - target) ** 4 * p**2 * torch.log(1 - p))[~pos].sum()
    return (pos_loss + neg_loss) / pos.sum().clamp(min=1)


def face_sample(rng: np.random.Generator, photo: Photo) -> tuple[np.ndarray, int]:
    """Return an augmented die crop and its class (0 when the crop is centred on no die)."""
    image, centres, sides, values = photo
    i = int(rng.integers(len(values)))
    side = sides[i] * FACE_MARGIN * (rng.uniform(0.75, 1.35) if STRONG else rng.uniform(0.8, 1.25))
    draw = rng.random()
    if draw < 0.2:
        at = np.array([rng.uniform(0, image.shape[1]), rng.uniform(0, image.shape[0])])
        near = np.hypot(*(centres - at).T) / sides
        label = 0 if near.min() > 0.6 else -1
        if label < 0:
            return face_sample(rng, photo)
    elif draw < 0.2 + ZOOMED:
        # a finder that splits a big die puts small candidates on its corner pips: a close
        # look there is no die, else one pip and a corner read as a die showing 1
        turn, off = rng.uniform(0, 2 * np.pi), rng.uniform(0.25, 0.45) * sides[i]
        at = centres[i] + off * np.array([np.cos(turn), np.sin(turn)])
        side, label = sides[i] * FACE_MARGIN * rng.uniform(0.35, 0.6), 0
    else:
        jitter = 0.1 if STRONG else 0.08
        at, label = centres[i] + rng.normal(0, jitter * sides[i], 2), int(values[i])
    crop = face_crop(image, float(at[0]), float(at[1]), side, rng.uniform(0, 360), FACE_SIZE)
    if rng.random() < 0.5:
        crop = crop[:, ::-1].copy()
    return fainter(rng, photometric(rng, crop)), label


def fainter(rng: np.random.Generator, crop: np.ndarray) -> np.ndarray:
    """Cut a crop's contrast for a FAINT share of crops."""
    if rng.random() >= FAINT:
        return crop
    mean = float(crop.mean())
    return np.clip((crop - mean) * rng.uniform(0.5, 0.75) + mean, 0, 255).astype(np.uint8)


def fit(
    net: nn.Module, epochs: int, steps: int, batch_loss: Callable[[], torch.Tensor], name: str
) -> nn.Module:
    """Train a net with AdamW and a one-cycle schedule on a fresh augmented batch each step."""
    opt = torch.optim.AdamW(net.parameters(), 3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=epochs * steps)
    for epoch in range(epochs):
        net.train()
        total = 0.0
        with progress(range(steps), f"{name} epoch {epoch}") as bar:
            for _ in bar:
                loss = batch_loss()
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                total += loss.item()
        print(f"{name} epoch {epoch} loss {total / steps:.4f}", flush=True)
    return net


def train_faces(photos: Photos, epochs: int, rng: np.random.Generator, width: float) -> nn.Module:
    """Train the face reader on freshly augmented crops each step."""
    net = FaceReader(width)

    def batch_loss() -> torch.Tensor:
        batch = [face_sample(rng, photos.draw(rng)) for _ in range(128)]
        x = torch.from_numpy(to_blob(np.stack([b[0] for b in batch])))
        y = torch.tensor([b[1] for b in batch])
        return nn.functional.cross_entropy(net(x), y, label_smoothing=0.02)

    return fit(net, epochs, 60, batch_loss, "faces")


def train_finder(photos: Photos, epochs: int, rng: np.random.Generator) -> nn.Module:
    """Train the finder on augmented whole photos."""
    net = DieFinder()

    def batch_loss() -> torch.Tensor:
        batch = [finder_sample(rng, photos.draw(rng)) for _ in range(16)]
        x = torch.from_numpy(to_blob(np.stack([b[0] for b in batch])))
        t = torch.from_numpy(np.stack([b[1] for b in batch]))
        out = net(x)
        size_err = torch.abs(out[:, 1] - t[:, 1]) * t[:, 2]
        size_loss = size_err.sum() / t[:, 2].sum().clamp(min=1)
        return focal(out[:, 0], t[:, 0]) + 0.1 * size_loss

    return fit(net, epochs, 40, batch_loss, "finder")


def export(
    net: nn.Module,
    shape: tuple[int, ...],
    name: str,
    batch: bool,
    folds: list[str],
    calibration: list[Photo] | None,
) -> None:
    """Write a trained net as ONNX for onnxruntime (opset 13, dynamic batch for face readers),
    made int8 on the calibration photos unless there are none."""
    net.eval()
    axes = {"x": {0: "n"}, "y": {0: "n"}} if batch else None
    torch.onnx.export(
        net,
        torch.zeros(*shape),
        str(MODELS / name),
        input_names=["x"],
        output_names=["y"],
        dynamic_axes=axes,
        opset_version=13,
        dynamo=False,
    )
    stamp(MODELS / name, folds)
    if calibration:
        quantize(MODELS / name, calibration)


def stamp(path: Path, folds: list[str]) -> None:
    """Record in an .onnx file the folds of real photos it learned from (`trained_on`)."""
    model = onnx.load(str(path))
    onnx.helper.set_model_props(model, {"trained_on": ",".join(folds)})
    onnx.save(model, str(path))


def seeded(seed: int) -> np.random.Generator:
    """Seed torch and return a numpy generator: one seed per trained net."""
    torch.manual_seed(seed)
    return np.random.default_rng(seed)


def run(args: argparse.Namespace) -> None:
    """Train the finder and the face readers the options ask for and write them."""
    global STRONG, FAINT, ZOOMED, MODELS, FACE_SIZE, FIND_SIZE
    STRONG, FAINT, ZOOMED = args.aug == "strong", args.faint, args.zoomed
    MODELS, FACE_SIZE, FIND_SIZE = args.out, args.face_size, args.find_size
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    real = photo_sets(args.photos, args.holdout)
    photos = Photos(
        real,
        synth_photos(args.synth, SYNTH_SEED, KINDS[args.kinds]),
        args.real_share,
        args.paste,
        [cut_dice(photos) for photos in real],
    )
    counts = " and ".join(f"{len(p)} {name}" for p, name in zip(real, args.photos, strict=True))
    print(f"{counts} real and {len(photos.synth)} synthetic photos", flush=True)
    MODELS.mkdir(parents=True, exist_ok=True)
    folds = learned_folds(args.photos, args.holdout)
    calibration = (
        None if args.float else calibration_photos(real) + photos.synth[:CALIBRATION_SYNTH]
    )
    start = time.time()
    if args.only != "finder":
        members = [args.face_net] if args.face_net else range(1, args.face_nets + 1)
        for k in members:
            faces = train_faces(
                replace(photos, real_share=args.face_real_share),
                args.face_epochs,
                seeded(args.seed + k),
                args.face_width,
            )
            export(
                faces,
                (1, 3, FACE_SIZE, FACE_SIZE),
                f"d6_faces_{k}.onnx",
                True,
                folds,
                calibration,
            )
    if args.only != "faces":
        finder = train_finder(photos, args.finder_epochs, seeded(args.seed))
        # the finder stays float: in int8 it read one die fewer on fold b (run #10)
        export(finder, (1, 3, FIND_SIZE, FIND_SIZE), "d6_finder.onnx", False, folds, None)
    print(f"done in {time.time() - start:.0f} s")
