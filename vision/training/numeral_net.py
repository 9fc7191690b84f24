"""The numeral net in torch: its layers, its training loop and its export to ONNX."""

from __future__ import annotations

import json
import time
from pathlib import Path

import cv2
import numpy as np
import onnx
import onnx.numpy_helper
import torch
from torch import nn

from tidetower.vision.d6.nets import to_blob
from tidetower.vision.numerals.nets import CLASSES
from tidetower.vision.progress import progress
from tidetower.vision.training.numeral_crops import SIZE, Crops

EMBEDDING = 96
"""Width of the embedding a taught profile compares dice by."""


def _conv(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
    )


class NumeralNet(nn.Module):
    """Seven 3x3 conv layers, global pooling, an embedding and one softmax over CLASSES.

    A `stem` of that many channels first looks at the crop at full resolution: a d20's
    numerals are a few pixels tall, and the first stride-2 layer would halve them.
    """

    def __init__(self, width: float = 1.0, stem: int = 0) -> None:
        super().__init__()
        c = [max(8, int(n * width)) for n in (24, 32, 48, 64, 96, 128)]
        first = [_conv(3, stem, 1), _conv(stem, c[0], 2)] if stem else [_conv(3, c[0], 2)]
        self.features = nn.Sequential(
            *first,
            _conv(c[0], c[1], 2),
            _conv(c[1], c[2]),
            _conv(c[2], c[3], 2),
            _conv(c[3], c[4]),
            _conv(c[4], c[5], 2),
            _conv(c[5], c[5]),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.embed = nn.Linear(c[5], EMBEDDING)
        self.head = nn.Linear(EMBEDDING, len(CLASSES))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        e = torch.relu(self.embed(self.features(x)))
        return self.head(e), nn.functional.normalize(e, dim=1)


def augment(images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Vary light, colour, sharpness, noise and compression, and turn by right angles."""
    x = images.astype(np.float64)
    n = len(x)
    gain = rng.uniform(0.6, 1.4, (n, 1, 1, 1)) * rng.uniform(0.85, 1.15, (n, 1, 1, 3))
    x = x * gain + rng.uniform(-30, 30, (n, 1, 1, 1))
    gamma = rng.uniform(0.7, 1.4, (n, 1, 1, 1))
    x = 255.0 * (np.clip(x, 0, 255) / 255.0) ** gamma
    grey = rng.random(n) < 0.1
    x[grey] = x[grey].mean(axis=3, keepdims=True)
    x += rng.normal(0, 1, (n, 1, 1, 1)) * rng.uniform(0, 6) * rng.standard_normal(x.shape)
    out = np.clip(x, 0, 255).astype(np.uint8)
    for i in np.nonzero(rng.random(n) < 0.3)[0]:
        out[i] = np.asarray(cv2.GaussianBlur(out[i], (0, 0), rng.uniform(0.4, 1.3)))
    for i in np.nonzero(rng.random(n) < 0.3)[0]:
        quality = int(rng.integers(30, 90))
        ok, data = cv2.imencode(".jpg", out[i], [cv2.IMWRITE_JPEG_QUALITY, quality])
        if ok:
            out[i] = np.asarray(cv2.imdecode(data, cv2.IMREAD_COLOR))
    turns = [int(k) for k in rng.integers(0, 4, n)]
    return np.stack([np.rot90(img, k) for img, k in zip(out, turns, strict=True)])


def train(
    crops: Crops,
    epochs: int,
    seed: int,
    width: float = 1.0,
    start: NumeralNet | None = None,
    batch: int = 128,
    stem: int = 0,
) -> NumeralNet:
    """Train a numeral net on labelled crops with one-cycle AdamW and label smoothing.

    From `start` (a net read back from its export) it is tuned gently, batch norms frozen.
    """
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = start or NumeralNet(width, stem)
    top = 3e-3 if start is None else 1e-3
    steps = max(1, len(crops.labels) // batch)
    opt = torch.optim.AdamW(net.parameters(), top, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, top, total_steps=epochs * steps)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)
    began = time.time()
    for epoch in range(epochs):
        _train_mode(net, frozen_norms=start is not None)
        order = rng.permutation(len(crops.labels))
        total = 0.0
        with progress(range(steps), f"epoch {epoch + 1}/{epochs}") as bar:
            for step in bar:
                idx = order[step * batch : (step + 1) * batch]
                x = torch.from_numpy(to_blob(augment(crops.images[idx], rng)))
                loss = loss_fn(net(x)[0], torch.from_numpy(crops.labels[idx]))
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                total += float(loss.detach())
        print(
            f"epoch {epoch + 1}/{epochs}: loss {total / steps:.3f} ({time.time() - began:.0f} s)",
            flush=True,
        )
    return net.eval()


def _train_mode(net: NumeralNet, frozen_norms: bool) -> None:
    """Put the net in training mode; frozen batch norms keep the statistics they hold."""
    net.train()
    if frozen_norms:
        for module in net.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.eval()


def from_export(path: Path, width: float = 1.0) -> NumeralNet:
    """Read an export back into a net (float or int8: int8 weights are dequantized); each
    conv gets its folded weights and bias."""
    model = onnx.load(str(path))
    values = _weights(model)
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    linears = [n for n in model.graph.node if n.op_type == "Gemm"]
    stem = len(values[convs[0].input[1]]) if len(convs) == 8 else 0
    net = NumeralNet(width, stem)
    blocks = [m for m in net.features if isinstance(m, nn.Sequential)]
    with torch.no_grad():
        for block, node in zip(blocks, convs, strict=True):
            conv, norm = block[0], block[1]
            conv.weight.copy_(torch.from_numpy(values[node.input[1]]))
            norm.bias.copy_(torch.from_numpy(values[node.input[2]]))
            norm.weight.fill_(float(np.sqrt(1 + norm.eps)))
            norm.running_mean.zero_()
            norm.running_var.fill_(1.0)
        for layer, node in zip((net.embed, net.head), linears, strict=True):
            layer.weight.copy_(torch.from_numpy(values[node.input[1]]))
            layer.bias.copy_(torch.from_numpy(values[node.input[2]]))
    return net.eval()


def _weights(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """Return every constant tensor by name as float32, int8 ones dequantized."""
    values = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type != "DequantizeLinear" or node.input[0] not in values:
            continue
        q, scale = values[node.input[0]].astype(np.float32), values[node.input[1]]
        zero = values[node.input[2]].astype(np.float32) if len(node.input) > 2 else 0.0
        axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
        shape = [1] * q.ndim
        if np.size(scale) > 1:  # per channel, along `axis` (a bias has only the one)
            shape[axis if q.ndim > 1 else 0] = -1
        values[node.output[0]] = (q - np.reshape(zero, shape)) * np.reshape(scale, shape)
    return {name: np.array(v, np.float32) for name, v in values.items()}


def accuracy(net: NumeralNet, crops: Crops) -> float:
    """Return the share of crops whose likeliest class is their label."""
    with torch.no_grad():
        right = 0
        for i in range(0, len(crops.labels), 512):
            x = torch.from_numpy(to_blob(crops.images[i : i + 512]))
            right += int((net(x)[0].argmax(1).numpy() == crops.labels[i : i + 512]).sum())
    return right / max(1, len(crops.labels))


def export(net: NumeralNet, path: Path, trained_on: str) -> None:
    """Write the net as ONNX (logits "y", embedding "e"), its classes and sources recorded."""
    net.eval()
    torch.onnx.export(
        net,
        (torch.zeros(1, 3, SIZE, SIZE),),
        str(path),
        input_names=["x"],
        output_names=["y", "e"],
        opset_version=13,
        dynamo=False,
        dynamic_axes={"x": {0: "n"}, "y": {0: "n"}, "e": {0: "n"}},
    )
    model = onnx.load(str(path))
    onnx.helper.set_model_props(model, {"classes": json.dumps(CLASSES), "trained_on": trained_on})
    onnx.save(model, str(path))


def quantize(path: Path, crops: np.ndarray, batch: int = 64) -> None:
    """Replace a float numeral net by its int8 version, calibrated on training crops."""
    from tidetower.vision.training.int8 import int8

    int8(path, (to_blob(crops[i : i + batch]) for i in range(0, len(crops), batch)))
