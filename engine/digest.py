"""A summary of stored rolls kept as JSON in the store (its `summary` table), and the one
pass over the rows that makes or extends it: a tower's start and `stats luck` read the
summary and the rolls after it, never a year of rolls (issue 37). Pure but for the reading
and writing the store's own methods do."""

from __future__ import annotations

import gc
import json
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tidetower.engine.barline import Step
from tidetower.engine.bounds import check_record
from tidetower.engine.codec import load_record
from tidetower.engine.luck import Move, Shape, Tally, Throw
from tidetower.engine.replay import record_of
from tidetower.engine.rows import READ_ERRORS, BadRow
from tidetower.engine.rules import RollRecord
from tidetower.engine.stats import Counted, dice_of, dice_of_body
from tidetower.engine.store import SessionStore, StoreError
from tidetower.engine.summary import Summary, SummaryWalk
from tidetower.engine.who import Who

DIGEST_VERSION = 1
"""Bumped when the summary's JSON changes: a summary of another version is made again."""


def who_json(w: Who) -> list[Any]:
    """Who threw, as a JSON list."""
    return [w.id, w.actor, w.side, w.system, w.at]


def who_from(data: list[Any]) -> Who:
    """Who threw, from `who_json`."""
    identity, actor, side, system, at = data
    return Who(str(identity), str(actor), side if side in ("a", "b") else None, system, at)


def shape_json(s: Shape) -> dict[str, Any]:
    """A throw's odds as JSON (floats kept exactly: JSON writes them as Python does)."""
    return {
        "counts": s.counts,
        "dice": s.dice,
        "mean": s.mean,
        "variance": s.variance,
        "chances": [list(c) for c in s.chances],
        "labels": [[v, label] for v, label in s.labels.items()],
        "tails": [[v, *t] for v, t in s.tails.items()],
    }


def shape_from(d: dict[str, Any]) -> Shape:
    """A throw's odds from `shape_json`."""
    return Shape(
        d["counts"],
        d["dice"],
        float(d["mean"]),
        float(d["variance"]),
        tuple((int(v), float(c)) for v, c in d["chances"]),
        {int(v): str(label) for v, label in d["labels"]},
        {int(v): (float(a), float(b)) for v, a, b in d["tails"]},
    )


def throw_json(t: Throw) -> list[Any]:
    """One counted throw as JSON."""
    return [who_json(t.who), shape_json(t.shape), t.rolled]


def throw_from(data: list[Any]) -> Throw:
    """One counted throw from `throw_json`."""
    return Throw(who_from(data[0]), shape_from(data[1]), int(data[2]))


def step_json(s: Step) -> list[Any]:
    """One step of a bar as JSON."""
    return [who_json(s.who), s.before, s.after, list(s.causes), s.low, s.high, s.routed]


def step_from(d: list[Any]) -> Step:
    """One step of a bar from `step_json`."""
    routed = d[6] if d[6] in ("a", "b") else None
    return Step(who_from(d[0]), int(d[1]), int(d[2]), tuple(d[3]), int(d[4]), int(d[5]), routed)


def summary_json(s: Summary) -> dict[str, Any]:
    """A summary as JSON, for the store."""
    return {
        "version": DIGEST_VERSION,
        "rolls": s.rolls,
        "dice": [[*die, n] for die, n in s.dice.items()],
        "tallies": [
            [t.by, t.name, t.counts, t.throws, t.expected, t.rolled, t.variance] for t in s.tallies
        ],
        "best": [throw_json(t) for t in s.best],
        "worst": [throw_json(t) for t in s.worst],
        "throws": s.throws,
        "uncounted": [[reason, n] for reason, n in s.uncounted.items()],
        "moves": s.moves,
        "last_moves": [[who_json(m.who), m.cause, m.before, m.after] for m in s.last_moves],
        "bars": {system: [step_json(t) for t in steps] for system, steps in s.bars.items()},
        "bar_moves": dict(s.bar_moves),
        "seqs": dict(s.seqs),
        "skipped": [[b.seq, b.reason] for b in s.skipped],
    }


def summary_from(d: dict[str, Any]) -> Summary:
    """A summary from `summary_json`; KeyError, TypeError or ValueError when it is not one."""
    if d.get("version") != DIGEST_VERSION:
        raise ValueError(f"a summary of version {d.get('version')!r}")
    return Summary(
        rolls=int(d["rolls"]),
        dice=Counter({Counted(k, int(f), bool(t), str(n)): int(c) for k, f, t, n, c in d["dice"]}),
        tallies=tuple(Tally(b, n, c, int(t), e, int(r), v) for b, n, c, t, e, r, v in d["tallies"]),
        best=tuple(throw_from(t) for t in d["best"]),
        worst=tuple(throw_from(t) for t in d["worst"]),
        throws=int(d["throws"]),
        uncounted=Counter({str(r): int(n) for r, n in d["uncounted"]}),
        moves=int(d["moves"]),
        last_moves=tuple(Move(who_from(w), c, int(b), int(a)) for w, c, b, a in d["last_moves"]),
        bars={str(s): tuple(step_from(t) for t in steps) for s, steps in d["bars"].items()},
        bar_moves={str(s): int(n) for s, n in d["bar_moves"].items()},
        seqs={str(i): int(s) for i, s in d["seqs"].items()},
        skipped=tuple(BadRow(int(s), str(r)) for s, r in d["skipped"]),
    )


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for a while (a year's records hold no cycles to free;
    collecting as they pile up doubled the time), then back as it was."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def pointed(body: dict[str, Any]) -> bool:
    """Whether a stored roll's dice point at their reading (schema 2 on): read it straight."""
    roll = body.get("roll")
    dice = roll.get("dice") if isinstance(roll, dict) else None
    return isinstance(dice, list) and all(isinstance(d, dict) and "read" in d for d in dice)


def body_dice(body: dict[str, Any]) -> tuple[Counted, ...]:
    """The dice a stored roll counts: read straight from its JSON, or through the codec for
    a record of an older schema (or an odd shape, which then says what is wrong)."""
    if pointed(body):
        try:
            return dice_of_body(body)
        except (KeyError, TypeError, ValueError, IndexError):
            pass
    return dice_of(load_record(body))


def counted_record(body: dict[str, Any]) -> tuple[tuple[Counted, ...], RollRecord]:
    """A stored roll's dice as counted and its record without them, within bounds."""
    record = check_record(record_of(body))
    return body_dice(body), record


def kept(store: SessionStore) -> tuple[int, Summary]:
    """The store's summary and the seq it counts the rolls before (0: none kept, or one no
    longer right or readable: made again)."""
    found = store.kept_summary()
    if found is None:
        return 0, Summary()
    try:
        return found[0], summary_from(json.loads(found[1]))
    except (*READ_ERRORS, json.JSONDecodeError):
        return 0, Summary()


def walked(store: SessionStore, first: int = 0, before: int | None = None) -> Summary:
    """The rolls stored from seq `first` on, before `before`, summarised in one pass that
    keeps no roll; a row that cannot be read is kept in the summary's `skipped`."""
    walk = SummaryWalk()
    was = len(store.skipped)
    with gc_paused():
        for dice, record in store.records(counted_record, first=first, before=before):
            walk.add(dice, record)
    walk.skipped.extend(store.skipped[was:])
    return walk.summary()


def stored_summary(store: SessionStore, before: int | None = None) -> tuple[int, Summary]:
    """The summary of the rolls stored before `before` (None: all), from the one kept where
    it serves, and the seq its kept part ended at (0: every roll was read)."""
    upto, found = kept(store)
    if before is not None and upto > before:
        upto, found = 0, Summary()  # kept past the rolls asked for: read them all
    return upto, found.then(walked(store, upto, before))


def summary_before(
    path: Path, writer: SessionStore, before: int, report: Callable[[str], None]
) -> Summary:
    """The summary of the rolls stored at `path` before seq `before`, read read-only from the
    summary kept and the rolls after it, and kept again (by `writer`, unless it only reads)
    when it reaches further; each row that cannot be read named through `report`."""
    with SessionStore(path, read_only=True) as reader:
        upto, found = stored_summary(reader, before)
    for bad in found.skipped:
        report(bad.line())
    if before > upto and not writer.read_only:
        try:
            writer.keep_summary(before, json.dumps(summary_json(found)))
        except StoreError as error:  # a full disk: the summary is made again next time
            report(str(error))
    return found
