"""Sentences a person reads: the declared roll, as `tidetower session` prints it and a
declare's done-sentence (mqtt/registry.py) says it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Body = Mapping[str, Any]


def _pool(declared: Body) -> str | None:
    """'a pool of 3d8', 'a pool of 3', 'a d8 pool', or None when no pool is declared."""
    pool, tier = declared.get("pool"), declared.get("tier")
    if pool is None:
        return f"a {tier} pool" if tier else None
    return f"a pool of {pool}{tier or ''}"


def declared_line(declared: Body) -> str:
    """The declared next roll in words, e.g. 'Zhao for side A, Tide-linked, a pool of 3d8,
    replying to roll 5a2b-3'; 'nothing' when nothing is declared."""
    side = declared.get("side")
    who = (declared.get("actor") or "") + (f" for side {side.upper()}" if side else "")
    marks = declared.get("marks")
    parts = [
        who.strip(),
        "Tide-linked" if declared.get("tide_linked") else "",
        f"mode {declared['mode']}" if declared.get("mode") else "",
        _pool(declared) or "",
        f"{marks} Marks entered by the GM" if marks is not None else "",
        f"replying to roll {declared['reply_to']}" if declared.get("reply_to") else "",
        *(f"{key} {value}" for key, value in (declared.get("params") or {}).items()),
    ]
    return ", ".join(part for part in parts if part) or "nothing"
