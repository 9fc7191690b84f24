"""Sentences a person reads: the declared roll and the tower's reply to a GM command, as
`tidetower gm` and `tidetower session` print them (`--json` keeps the raw form for scripts)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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


Done = Callable[[Body, Body], str]
"""What a command did, from its request body and the reply's detail."""

DONE: dict[str, Done] = {
    "declare": lambda body, _: f"declared the next roll: {declared_line(body)}",
    "tide": lambda _body, _: "set up a new Tide",
    "system": lambda body, _: f"now playing {body.get('name')}",
    "roll": lambda _, detail: f"recorded roll {detail.get('roll_id')}: {detail.get('summary')}",
    "die": lambda body, _: (
        f"left die {body.get('index')} out as no die"
        if body.get("not_a_die")
        else f"entered die {body.get('index')} as {body.get('kind')} showing {body.get('value')}"
    ),
    "undo": lambda _, detail: f"took back roll {detail.get('roll_id')}",
    "redo": lambda _, detail: f"put back the roll taken back, as roll {detail.get('roll_id')}",
    "reread": lambda _body, _: "the camera read the tray again",
    "rethrow": lambda _body, _: "dropped the reading: throw the dice again",
    "learn": lambda _, detail: f"learning from {detail.get('corrections')} corrections",
}


def reply_line(reply: Body, body: Body) -> str:
    """The tower's reply to a command (`cmd/result`) as one sentence, with where the bar
    stands when the reply says."""
    command = str(reply.get("command"))
    if not reply.get("ok"):
        error = reply.get("error") or {}
        return f"The tower refused {command}: {error.get('message', 'it gave no reason')}."
    detail = reply.get("detail") or {}
    done = DONE.get(command)
    said = done(body, detail) if done is not None else f"{command}: done"
    if "position" in detail:
        said += f"; the marker stands at {detail['position']}"
    return said[0].upper() + said[1:] + "."
