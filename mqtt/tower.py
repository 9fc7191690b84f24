"""The read loop's state as the retained `tower` payload, from the loop's own objects.

The wire follows the loop (and the learning) by shape, `LoopView` and `LearnView`, so this
package does not import the firmware; what they hold (`Attention`, `Reading`, `TowerState`)
are the shared types of `tidetower.engine.tray`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from tidetower.engine.tray import Attention, Reading, TowerState
from tidetower.mqtt.payloads import AttentionBody, DieBody, TowerPayload, UnreadableBody


class LoopView(Protocol):
    """The read loop as the publisher follows it (firmware's `ReadLoop`)."""

    @property
    def state(self) -> TowerState: ...
    @property
    def attention(self) -> Attention | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def on_state(self) -> list[Callable[[TowerState], None]]: ...


class LearnStatusView(Protocol):
    """Where learning from corrections stands (firmware's `LearnStatus`)."""

    def to_dict(self) -> dict[str, Any]: ...


class LearnView(Protocol):
    """Learning from the GM's corrections as the publisher follows it (firmware's `Learner`)."""

    @property
    def status(self) -> LearnStatusView: ...
    @property
    def on_status(self) -> list[Callable[[Any], None]]: ...


def attention_body(attention: Attention | None) -> dict[str, Any] | None:
    """The `attention` of the `tower` payload from the loop's Attention (None stays None)."""
    if attention is None:
        return None
    reading = attention.reading or Reading()
    body = AttentionBody(
        kind=attention.kind,
        reason=attention.reason,
        unreadable=[
            UnreadableBody.seen(n, u)
            for n, u in zip(attention.die_numbers(), reading.unreadable, strict=True)
        ],
        dice=[DieBody.seen(d) for d in reading.dice],
        snapshot=attention.snapshot,
    )
    return body.model_dump()


def tower_payload(
    state: str, attention: Mapping[str, Any] | None = None, error: str | None = None
) -> TowerPayload:
    """The retained `tower`: attention only in needs-attention, the error only in error."""
    name = str(state)
    return TowerPayload.model_validate(
        {
            "state": name,
            "attention": attention if name == TowerState.NEEDS_ATTENTION else None,
            "error": error if name == TowerState.ERROR else None,
        }
    )
