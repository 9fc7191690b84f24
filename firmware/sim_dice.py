"""The practice table's own dice: rendered dice of one make each, taught once and kept.

`run --sim` throws these dice. On its first start it teaches each numeral die as a table
would: the simulated player throws the die alone, the reader finds it, the simulated GM
says the face it shows, until every face has PER_FACE photos; the dice are then kept in a
cache folder (`$TIDETOWER_SIM_DICE`, else the user's cache) so later starts are quick. The
pip d6 are read by the pip reader and taught nothing.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2

from tidetower.vision.dice.table import SUFFIX, DiceFileError, find_die, load_die, save_die, slug
from tidetower.vision.dice.teach import Seen, keep_taught, seen_in, taught_dice
from tidetower.vision.kinds import face_values
from tidetower.vision.read import read_dice
from tidetower.vision.sources.simulated import SimSettings, SimulatedSource
from tidetower.vision.synth import SynthDie
from tidetower.vision.synth.numerals import NumeralLook

PER_FACE = 3
"""Photos a face is taught from: 3 gave most of the gain of 10 (docs/BENCHMARKS.md)."""
VERSION = 2
"""Bumped when the dice or how they are taught change: an old cache is taught anew."""
LOCK = ".teaching"
TOWER_SIDE = (0.068, 0.114)
"""The practice dice's size in the picture, as the tower's camera sees real ones: 12-20 mm
dice on the 176 mm of floor its picture spans (`tidetower enclosure geometry`)."""
TOWER_LEAN = (0.45, 0.65)
"""How much of its sides a die at the picture's edge shows under the tower's camera, 176.5
mm over the floor: about half a side (the renderer's default, 0.3-1.2, is a wider lens)."""


@dataclass(frozen=True)
class SimDie:
    """One of the practice table's dice: its name, kind and make."""

    name: str
    kind: str
    look: NumeralLook


SIM_DICE = (
    SimDie(
        "purple omen", "d20", NumeralLook((150, 40, 120), (235, 235, 235), stroke=0.14, layout=20)
    ),
    SimDie(
        "blue d12",
        "d12",
        NumeralLook((190, 70, 30), (240, 240, 240), cv2.FONT_HERSHEY_DUPLEX, 0.13, layout=12),
    ),
    SimDie("red d8", "d8", NumeralLook((40, 40, 200), (240, 240, 240), stroke=0.15, layout=8)),
    SimDie(
        "green units",
        "d10",
        NumeralLook((50, 170, 40), (20, 20, 20), cv2.FONT_HERSHEY_TRIPLEX, 0.12, "dot", layout=10),
    ),
    SimDie(
        "yellow tens",
        "d10-tens",
        NumeralLook((40, 215, 235), (20, 20, 20), cv2.FONT_HERSHEY_DUPLEX, 0.12, layout=11),
    ),
)


def sim_settings() -> SimSettings:
    """The simulated camera throwing the practice table's dice."""
    looks = tuple((die.kind, die.look) for die in SIM_DICE)
    return SimSettings(looks=looks, side=TOWER_SIDE, lean=TOWER_LEAN)


def sim_dice_home() -> Path:
    """Where the practice table's taught dice are kept between starts."""
    chosen = os.environ.get("TIDETOWER_SIM_DICE")
    if chosen:
        return Path(chosen)
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "tidetower" / f"sim-dice-{VERSION}"


def untaught(folder: Path) -> list[SimDie]:
    """The practice dice not yet kept in the folder with every face taught."""
    return [die for die in SIM_DICE if not _taught(folder, die)]


def _taught(folder: Path, die: SimDie) -> bool:
    """True when the folder keeps this die with PER_FACE photos of every face."""
    try:
        kept = load_die(find_die(folder, die.name))
    except DiceFileError:
        return False
    counts = kept.taught()
    return kept.kind == die.kind and all(
        counts.get(f, 0) >= PER_FACE for f in face_values(die.kind)
    )


def teaching_line(folder: Path) -> str | None:
    """The line that says, before the pause, which practice dice are taught now (once)."""
    left = ", ".join(die.name for die in untaught(folder))
    if not left:
        return None
    return (
        f"sim: teaching the practice table's dice ({left}) by throwing each: "
        f"once, about a minute; kept in {folder}\n"
    )


def teach_sim_dice(folder: Path, say: Callable[[str], None] = lambda _: None) -> None:
    """Teach every practice die not kept yet, by throwing it and confirming each face; two
    towers starting at once teach them once (the second waits on the folder's lock)."""
    if not untaught(folder):
        return
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for die in untaught(folder):
            say(f"teaching the practice table's {die.name} ({die.kind}): once, kept in {folder}")
            keep_taught(folder, taught_dice(_thrown(die), {die.kind: die.name}))


def _thrown(die: SimDie) -> list[Seen]:
    """Throw one die until every face has PER_FACE photos the GM confirmed."""
    source = SimulatedSource(VERSION, sim_settings())
    wanted = dict.fromkeys(face_values(die.kind), PER_FACE)
    seen: list[Seen] = []
    for _ in range(len(wanted) * PER_FACE * 20):  # a fair die shows every face long before
        if not any(wanted.values()):
            break
        (truth,) = _settled(source, die.kind)
        if wanted[truth.value] == 0:
            continue
        reading = read_dice(source.scene)
        boxes = [d.box for d in reading.dice] + [u.box for u in reading.unreadable]
        if len(boxes) == 1:  # the GM confirms the face of the one die the reader found
            seen.append(seen_in(source.scene, boxes[0], die.kind, truth.value))
            wanted[truth.value] -= 1
    return seen


def _settled(source: SimulatedSource, kind: str) -> tuple[SynthDie, ...]:
    """Throw the die and wait until it lies still; return what it shows."""
    if source.dice:
        source.reach_in()
    dice = source.throw(dice=(kind,))
    while not source.idle:
        source.read()
    return dice


def lay_out(home: Path, folder: Path) -> None:
    """Give a simulated tower the practice dice kept in `home`: each die not in its folder
    yet is copied there, where it then learns from the GM's corrections as a table's would."""
    for die in SIM_DICE:
        if not (folder / f"{slug(die.name)}{SUFFIX}").exists():
            save_die(folder, load_die(find_die(home, die.name)))
