"""The receiving side's guard against duplicates: each roll event is taken once by its id."""

from __future__ import annotations

from collections import OrderedDict


class Inbox:
    """Remembers the last `size` event ids ("<roll id>:<phase>") and refuses repeats."""

    def __init__(self, size: int = 1000) -> None:
        self.size = size
        self._seen: OrderedDict[str, None] = OrderedDict()

    def accept(self, event: str) -> bool:
        """True the first time `event` is offered; False for a repeat (QoS 1 may repeat)."""
        if event in self._seen:
            return False
        self._seen[event] = None
        if len(self._seen) > self.size:
            self._seen.popitem(last=False)
        return True
