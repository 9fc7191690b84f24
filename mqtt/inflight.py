"""The outbox events on their way to the broker: which attempt of each, and how many of its
messages the broker has still to acknowledge."""

from __future__ import annotations

import itertools
import threading

WINDOW = 20
"""Outbox events in flight at once."""


class InFlight:
    """Outbox events sent and not yet acknowledged, by seq. An ack of an earlier attempt
    (re-sent by paho after a reconnect) does not count for a later one."""

    def __init__(self) -> None:
        self._sent: dict[int, tuple[int, int]] = {}  # seq -> (attempt, messages unacked)
        self._attempts = itertools.count(1)
        self._lock = threading.Lock()

    def __bool__(self) -> bool:
        """True while any event waits for its acknowledgements."""
        with self._lock:
            return bool(self._sent)

    def has(self, seq: int) -> bool:
        """True if event `seq` is on its way."""
        with self._lock:
            return seq in self._sent

    def full(self) -> bool:
        """True when the window is full: newer events wait."""
        with self._lock:
            return len(self._sent) >= WINDOW

    def begin(self, seq: int, messages: int) -> int:
        """Count event `seq` in flight with `messages` to acknowledge; returns its attempt."""
        attempt = next(self._attempts)
        with self._lock:
            self._sent[seq] = (attempt, messages)
        return attempt

    def drop(self, seq: int) -> None:
        """Event `seq` is no longer on its way (delivered, or to be sent again)."""
        with self._lock:
            self._sent.pop(seq, None)

    def acked(self, seq: int, attempt: int) -> bool:
        """Count one acknowledgement; True when it was the event's last."""
        with self._lock:
            current, left = self._sent.get(seq, (0, 0))
            if current != attempt:
                return False
            self._sent[seq] = (attempt, left - 1)
            return left == 1
