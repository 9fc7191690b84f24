"""Sentences a person reads: the declared roll, as `tidetower session` prints it and a
declare's done-sentence (mqtt/registry.py) says it, in the active system's own words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tidetower.engine.describe import Description

Body = Mapping[str, Any]


def declared_line(declared: Body, table: Description) -> str:
    """The declared next roll in words, e.g. 'Kira, mode resist, Attribute 2' or 'Zhao for
    side A, mode opposed, pool 3, replying to roll 5a2b-3'; 'nothing' when nothing is
    declared. `declared` is a RollContext as JSON; the system's own fields said by label."""
    side = declared.get("side")
    who = (declared.get("actor") or "") + (f" for side {side.upper()}" if side else "")
    parts = [
        who.strip(),
        f"mode {declared['mode']}" if declared.get("mode") else "",
        f"pool {declared['pool']}" if declared.get("pool") is not None else "",
        *(_said(table, key, value) for key, value in (declared.get("params") or {}).items()),
        f"replying to roll {declared['reply_to']}" if declared.get("reply_to") else "",
    ]
    return ", ".join(part for part in parts if part) or "nothing"


def _said(table: Description, key: str, value: Any) -> str:
    """One own field: a flag by its label when set, else 'label value'."""
    label = next((f.label for f in table.fields if f.name == key), key)
    if isinstance(value, bool):
        return label if value else ""
    return "" if value is None else f"{label} {value}"
