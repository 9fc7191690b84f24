"""Which physical die it was (issue 29): the reader names each die it reads (a taught die by
its profile's name, else by its colour and kind), the name is stored, and the stats count
two d20s apart by it; a reading stored before dice were named loads, unnamed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from tidetower.engine.codec import dump, load_record
from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import Outcome, RollContext, RollRecord
from tidetower.engine.stats import Counted, dice_of, dice_of_body, summaries, summarise
from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead, Reading, roll_of
from tidetower.firmware.cli import main
from tidetower.firmware.corrections import by_hand
from tidetower.vision.colours import COLOURS
from tidetower.vision.numerals.nets import embedding_width
from tidetower.vision.numerals.profile import empty_profile, load_profile
from tidetower.vision.numerals.teach import Taught, learn
from tidetower.vision.read import load_image, named, read_dice
from tidetower.vision.score import load_labels
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import TraySpec, render_tray
from tidetower.vision.synth.numerals import NumeralLook

WHITE = NumeralLook(
    body=(235, 235, 235), ink=(20, 20, 20), font=cv2.FONT_HERSHEY_TRIPLEX, stroke=0.14
)
"""The table's taught d20: white plastic, black serif numerals."""
RED = NumeralLook(
    body=(40, 40, 190), ink=(235, 235, 235), font=cv2.FONT_HERSHEY_TRIPLEX, stroke=0.14
)
"""Another d20 on the table, never taught: red plastic, white numerals."""
D6_TRAY = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "d6-tray"
CONTEXT = RollContext(actor="Zhao", side="a", mode="unopposed", pool=1)


def _tray(look: NumeralLook, seed: int, value: int) -> np.ndarray:
    spec = TraySpec(size=(640, 480), side=(0.06, 0.07), floors=("dark",), look=look)
    return render_tray(seed, spec, dice=("d20",), values=(value,)).image


def _taught_profile(folder: Path, photo: np.ndarray, face: int, name: str) -> Path:
    """A profile that has taught one d20 face from one photo, the d20 named `name`."""
    taught = [Taught(photo, f"d20:{face}", None)]
    profile, _ = learn(taught, {"d20": name}, empty_profile(embedding_width()), lambda im: im)
    profile.save(folder, 1)
    return folder


def _record(reading: tuple[DieRead, ...], number: int = 1) -> RollRecord:
    return RollRecord(
        "s-1", number, "tide", CONTEXT, roll_of(Reading(reading)), Outcome("ok"), None,
        reading=reading,
    )  # fmt: skip


def test_attribution_by_profile_name(tmp_path: Path) -> None:
    omen = _tray(WHITE, 7_000_001, 17)
    profile = _taught_profile(tmp_path / "dice", omen, 17, "white omen")
    assert load_profile(profile).names == {"d20": "white omen"}
    settings = ReaderSettings(profile=str(profile))
    taught = read_dice(omen, settings=settings).dice
    assert [(d.die, d.value, d.named) for d in taught] == [("d20", 17, "white omen")]
    other = read_dice(_tray(RED, 7_000_002, 5), settings=settings).dice
    assert [(d.die, d.named) for d in other] == [("d20", "red d20")]  # not taught: its colour
    # Two d20s on one table, counted apart by the name each was read with.
    records = [_record((taught[0],), 1), _record((other[0],), 2), _record((other[0],), 3)]
    dice = [c for r in records for c in dice_of(r)]
    found = {s.name: (s.kind, s.throws) for s in summaries(dice)}
    assert found == {"white omen": ("d20", 1), "red d20": ("d20", 2)}
    assert [s.name for s in summaries(dice, "white omen")] == ["white omen"]
    assert {s.name for s in summaries(dice, "d20")} == {"white omen", "red d20"}


def test_a_colour_named_die_from_a_synthetic_tray() -> None:
    dice = read_dice(_tray(RED, 7_000_002, 5)).dice
    assert len(dice) == 1
    assert dice[0].named == f"red {dice[0].die}"
    assert dice[0].to_dict()["named"] == f"red {dice[0].die}"


@pytest.mark.skipif(
    not (D6_TRAY / "labels.json").exists(), reason=f"real photos not found at {D6_TRAY}"
)
def test_real_dice_of_many_colours_are_named_by_colour_and_kind() -> None:
    photo = sorted((p for p in load_labels(D6_TRAY) if p.split == "test"), key=lambda p: p.path)[0]
    dice = read_dice(load_image(photo.path)).dice
    assert len(dice) >= 5
    colours = [d.named.removesuffix(f" {d.die}") for d in dice]
    assert all(d.named.endswith(f" {d.die}") for d in dice)
    assert set(colours) <= set(COLOURS) and len(set(colours)) >= 3, colours


def test_naming_changes_no_face_and_keeps_a_taught_name() -> None:
    image = np.full((200, 400, 3), 30, np.uint8)
    image[50:150, 50:150] = (40, 40, 200)
    red = DieRead("d20", 4, (0.125, 0.25, 0.375, 0.75), 0.9)
    omen = DieRead("d20", 20, (0.625, 0.25, 0.875, 0.75), 0.99, named="white omen")
    assert named(image, (red, omen)) == (
        DieRead("d20", 4, red.box, 0.9, named="red d20"),
        omen,
    )


def test_a_die_named_only_where_the_reader_told_one_in_json() -> None:
    die = DieRead("d8", 3, (0.1, 0.1, 0.2, 0.2), 0.9)
    assert "named" not in die.to_dict()
    assert DieRead("d8", 3, die.box, 0.9, named="blue d8").to_dict()["named"] == "blue d8"


def _old(body: Any) -> Any:
    """A stored record as written before dice were named: no `named` anywhere."""
    if isinstance(body, dict):
        return {k: _old(v) for k, v in body.items() if k != "named"}
    if isinstance(body, list):
        return [_old(v) for v in body]
    return body


def test_an_old_stored_reading_without_names_still_loads() -> None:
    reading = (DieRead("d20", 11, (0.1, 0.1, 0.2, 0.2), 0.9, named="red d20"),)
    record = _record(reading)
    body = dump(record)
    assert body["reading"][0]["named"] == "red d20"  # type: ignore[index, call-overload]
    assert load_record(body) == record
    old = _old(body)
    assert "named" not in json.dumps(old)
    again = load_record(old)
    assert again.reading is not None and again.reading[0].named == ""
    assert dice_of(again) == dice_of_body(old) == (Counted("d20", 11),)
    # schema 1: the reading as DieRead.to_dict() wrote it, dice pointing at nothing
    first = {**old, "reading": [reading[0].to_dict()]}
    first["roll"] = {**old["roll"], "dice": [{"kind": "d20", "face": 11}]}
    assert load_record(first).reading == reading  # its to_dict() carried the name


def test_typed_dice_count_as_entered_keeping_the_name_they_corrected() -> None:
    read = Reading((DieRead("d20", 3, (0.1, 0.1, 0.2, 0.2), 0.6, named="white omen"),))
    corrected = by_hand(read, [("d20", 19)])
    assert corrected is not None
    die = DieRead(**{**corrected.dice[0].__dict__, "typed": True})
    record = RollRecord(
        "s-1", 1, "tide", CONTEXT,
        Roll((*roll_of(Reading((die,))).dice, Die(DieKind.D20, 8))), Outcome("ok"), None,
        reading=(die,),
    )  # fmt: skip
    assert dice_of(record) == (
        Counted("d20", 19, True, "white omen"),
        Counted("d20", 8, True),  # typed whole: no camera die, no name
    )
    figures = {s.name: (s.throws, s.typed) for s in summaries(dice_of(record))}
    assert figures == {"d20": (1, 1), "white omen": (1, 1)}
    assert summarise("white omen", list(dice_of(record))).kind == "d20"


def test_stats_dice_shows_and_picks_a_die_by_its_name(tmp_path: Path) -> None:
    store = tmp_path / "session.db"
    with Table(store) as table:  # a table's one d20 a throw: now the white, now the red
        for face in range(1, 21):
            for d20 in ("white omen", "red d20"):
                reading = (
                    DieRead("d20", face, (0.1, 0.1, 0.2, 0.2), 0.97, named=d20),
                    DieRead("d8", 1 + face % 8, (0.5, 0.1, 0.6, 0.2), 0.9),
                )
                table.declare(CONTEXT)
                table.record(roll_of(Reading(reading)), reading=reading)

    def cli(*args: str) -> str:
        result = CliRunner().invoke(main, ["stats", "dice", "--store", str(store), *args])
        assert result.exit_code == 0, result.output
        return result.output

    found = json.loads(cli("--json"))["dice"]
    assert [(d["die"], d.get("named"), d["throws"]) for d in found] == [
        ("d8", None, 40),
        ("d20", "red d20", 20),
        ("d20", "white omen", 20),
    ]
    picked = json.loads(cli("--json", "--die", "white omen"))["dice"]
    assert [(d["die"], d["named"]) for d in picked] == [("d20", "white omen")]
    plain = cli("--die", "d20")
    assert "white omen (d20): 20 throws" in plain and "red d20: 20 throws" in plain
    wrong = CliRunner().invoke(main, ["stats", "dice", "--store", str(store), "--die", "mauve"])
    assert wrong.exit_code != 0 and "no die named 'mauve'" in wrong.output
