"""What the camera read from one tray photo: frozen results the rest of the system consumes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Box = tuple[float, float, float, float]
"""Normalised (x0, y0, x1, y1), x to the right and y down, each 0..1."""


def _rounded(box: Box) -> list[float]:
    """Round a box for JSON so output stays short and stable."""
    return [round(v, 5) for v in box]


@dataclass(frozen=True)
class DieRead:
    """One die read with confidence: its kind, the face value up, where it lies."""

    die: str
    value: int
    box: Box
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        """Return the CLI-contract form of this die."""
        return {
            "die": self.die,
            "value": self.value,
            "box": _rounded(self.box),
            "confidence": round(self.confidence, 4),
        }


@dataclass(frozen=True)
class Unreadable:
    """A die seen but not read, with where it is and why, so nobody guesses it."""

    box: Box
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """Return the CLI-contract form of this unreadable die."""
        return {"box": _rounded(self.box), "reason": self.reason}


@dataclass(frozen=True)
class Reading:
    """Everything read from one photo, and how long reading took."""

    dice: tuple[DieRead, ...] = ()
    unreadable: tuple[Unreadable, ...] = ()
    ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return the CLI-contract form (without the image path)."""
        return {
            "dice": [d.to_dict() for d in self.dice],
            "unreadable": [u.to_dict() for u in self.unreadable],
            "ms": round(self.ms, 2),
        }

    def to_json(self, image: str | None = None) -> dict[str, Any]:
        """Return the CLI-contract object, with the image path first when given."""
        body = self.to_dict()
        return {"image": image, **body} if image is not None else body

    @property
    def values(self) -> tuple[int, ...]:
        """Return the read face values, sorted, for the rules engine."""
        return tuple(sorted(d.value for d in self.dice))
