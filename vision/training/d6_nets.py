"""The two small networks of the d6 reader, as PyTorch modules (training-time only)."""

from __future__ import annotations

import torch
from torch import nn

FACE_CLASSES = 7
"""0 means "not a die here"; 1..6 are the face values."""


def _block(cin: int, cout: int, stride: int = 1, dilation: int = 1) -> nn.Sequential:
    """Return conv 3x3, batch norm, ReLU: the one building block both nets use."""
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, padding=dilation, dilation=dilation, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class DieFinder(nn.Module):
    """Heatmap of die centres plus die size, at a quarter of the input resolution."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(_block(3, 16, 2), _block(16, 24, 2), _block(24, 24))
        self.deep = nn.Sequential(_block(24, 48, 2), _block(48, 48), _block(48, 48, dilation=2))
        self.merge = nn.Sequential(
            nn.Conv2d(72, 32, 1, bias=False),
            nn.BatchNorm2d(32),
            nn.ReLU(inplace=True),
            _block(32, 32),
        )
        self.head = nn.Conv2d(32, 2, 1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return (N, 2, H/4, W/4): centre logit and die side (fraction of input side)."""
        shallow = self.stem(x)
        deep = self.up(self.deep(shallow))
        return self.head(self.merge(torch.cat([shallow, deep], 1)))


class FaceReader(nn.Module):
    """Classify a die crop as not-a-die or face value 1..6."""

    def __init__(self, width: float = 1.0) -> None:
        super().__init__()
        a, b, c, d = (max(8, round(n * width)) for n in (16, 32, 64, 96))
        self.body = nn.Sequential(
            _block(3, a),
            _block(a, a),
            nn.MaxPool2d(2),
            _block(a, b),
            _block(b, b),
            nn.MaxPool2d(2),
            _block(b, c),
            _block(c, c),
            nn.MaxPool2d(2),
            _block(c, d),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Dropout(0.2),
            nn.Linear(d, FACE_CLASSES),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return (N, 7) class logits."""
        return self.body(x)
