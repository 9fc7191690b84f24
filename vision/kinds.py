"""The die kinds the camera tells apart, and the faces each one shows."""

from __future__ import annotations

from tidetower.engine.tray import DIE_NAMES, DieName, camera_faces

KINDS: tuple[DieName, ...] = tuple(k for k in DIE_NAMES if k != "d100")
"""Every kind the reader names (a d100 is read as a pair); "d10" is the units die (0..9),
"d10-tens" shows 00..90."""


def face_values(kind: str) -> tuple[int, ...]:
    """Return the values a die kind shows: d10 0..9, d10-tens 0..90 by tens, else 1..n."""
    if kind not in KINDS:
        raise ValueError(f"unknown die kind {kind!r}: expected one of {', '.join(KINDS)}")
    return camera_faces(kind)


def face_text(kind: str, value: int) -> str:
    """Return what is printed on a face: tens dice print two digits (00, 10, .., 90)."""
    return f"{value:02d}" if kind == "d10-tens" else str(value)


def check_face(kind: str, value: int) -> None:
    """Raise ValueError naming the choices when a kind cannot show `value`."""
    values = face_values(kind)
    if isinstance(value, bool) or value not in values:
        shown = ", ".join(face_text(kind, v) for v in values)
        raise ValueError(f"{kind} cannot show {value!r}: its faces are {shown}")
