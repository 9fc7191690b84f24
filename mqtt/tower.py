"""The read loop's state as the retained `tower` payload, from the loop's own objects.

The loop's `Attention`, `Reading`, `DieRead` and `Unreadable` are matched by shape here
(Protocols), so this package does not import the firmware or the camera code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from tidetower.mqtt.payloads import TowerPayload


class SeenDie(Protocol):
    """A die the camera read (vision's `DieRead`)."""

    @property
    def die(self) -> str: ...
    @property
    def value(self) -> int: ...
    @property
    def box(self) -> Sequence[float]: ...
    @property
    def confidence(self) -> float: ...


class UnreadDie(Protocol):
    """A die the camera saw but could not read (vision's `Unreadable`)."""

    @property
    def box(self) -> Sequence[float]: ...
    @property
    def reason(self) -> str: ...
    @property
    def die(self) -> str | None: ...
    @property
    def faces(self) -> Sequence[int]: ...


class TrayReading(Protocol):
    """What the camera made of the tray (vision's `Reading`)."""

    @property
    def dice(self) -> Sequence[SeenDie]: ...
    @property
    def unreadable(self) -> Sequence[UnreadDie]: ...


class LoopAttention(Protocol):
    """Why the read loop waits for the GM (firmware's `Attention`)."""

    @property
    def kind(self) -> str: ...
    @property
    def reason(self) -> str: ...
    @property
    def reading(self) -> TrayReading | None: ...


class LoopView(Protocol):
    """The read loop as the publisher follows it (firmware's `ReadLoop`)."""

    @property
    def state(self) -> str: ...
    @property
    def attention(self) -> LoopAttention | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def on_state(self) -> list[Callable[[Any], None]]: ...


class LearnStatusView(Protocol):
    """Where learning from corrections stands (firmware's `LearnStatus`)."""

    def to_dict(self) -> dict[str, Any]: ...


class LearnView(Protocol):
    """Learning from the GM's corrections as the publisher follows it (firmware's `Learner`)."""

    @property
    def status(self) -> LearnStatusView: ...
    @property
    def on_status(self) -> list[Callable[[Any], None]]: ...


def _box(box: Sequence[float]) -> list[float]:
    return [round(float(v), 5) for v in box]


def attention_body(attention: LoopAttention | None) -> dict[str, Any] | None:
    """The `attention` of the `tower` payload from the loop's Attention (None stays None)."""
    if attention is None:
        return None
    reading = attention.reading
    unread = reading.unreadable if reading is not None else ()
    seen = reading.dice if reading is not None else ()
    return {
        "kind": attention.kind,
        "reason": attention.reason,
        "unreadable": [_unread(i, u) for i, u in enumerate(unread)],
        "dice": [
            {
                "kind": d.die,
                "value": d.value,
                "box": _box(d.box),
                "confidence": round(float(d.confidence), 4),
            }
            for d in seen
        ],
    }


def _unread(index: int, die: UnreadDie) -> dict[str, Any]:
    """An unreadable die for `attention`: its kind (or None) and the faces the camera
    hesitated between (or none)."""
    return {
        "index": index,
        "box": _box(die.box),
        "reason": die.reason,
        "kind": die.die,
        "faces": list(die.faces),
    }


def tower_payload(
    state: str, attention: Mapping[str, Any] | None = None, error: str | None = None
) -> TowerPayload:
    """The retained `tower`: attention only in needs-attention, the error only in error."""
    name = str(state)
    return TowerPayload.model_validate(
        {
            "state": name,
            "attention": attention if name == "needs-attention" else None,
            "error": error if name == "error" else None,
        }
    )
