"""The table's own dice: kept atomically, refused when hostile, each read by its own reader."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tidetower.engine.tray import Attention, DieRead, Reading, Unreadable
from tidetower.firmware.cli import main as cli
from tidetower.firmware.corrections import entered
from tidetower.firmware.dice_cli import dice_folder
from tidetower.firmware.sim import sim_config, simulated_parts
from tidetower.firmware.sim_dice import (
    PER_FACE,
    SIM_DICE,
    sim_dice_home,
    sim_settings,
    teach_sim_dice,
    untaught,
)
from tidetower.firmware.tower import Tower
from tidetower.vision.dice.table import (
    SUFFIX,
    DiceFileError,
    load_dice,
    new_die,
    save_die,
)
from tidetower.vision.dice.teach import keep_taught, seen_in, taught_dice
from tidetower.vision.dice.which import known, told
from tidetower.vision.kinds import face_values
from tidetower.vision.read import read_dice
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.sources.simulated import SimulatedSource
from tidetower.vision.synth import TraySpec, render_tray
from tidetower.vision.synth.numerals import NumeralLook

GREEN_D8 = NumeralLook(body=(60, 150, 40), ink=(240, 240, 240), stroke=0.14, layout=8)
SIZE = (1296, 972)


def throws(kind: str, look: NumeralLook, seed: int, per_face: int) -> list[tuple[int, object]]:
    """Rendered throws of one physical die (one numbering), `per_face` a face."""
    spec = TraySpec(size=SIZE, noise=2.0, look=look, floors=("grey", "dark"), lean=(0.45, 0.65))
    out = []
    for face in face_values(kind):
        for i in range(per_face):
            tray = render_tray(seed + 101 * face + i, spec, dice=[kind], values=[face])
            out.append((face, (tray.image, tray.dice[0].box)))
    return out


@pytest.fixture(scope="module")
def taught_d8() -> object:
    """A d8 taught from three throws a face, ready to read."""
    seen = [seen_in(f, box, "d8", face) for face, (f, box) in throws("d8", GREEN_D8, 1, 3)]
    return known(taught_dice(seen, {"d8": "green d8"})[0])


def test_a_taught_die_reads_throws_it_was_not_taught_from_and_never_says_a_wrong_face(
    taught_d8: object,
) -> None:
    verdicts = [
        (face, told(frame, Unreadable(box, "found"), (taught_d8,)))  # type: ignore[arg-type]
        for face, (frame, box) in throws("d8", GREEN_D8, 50_000, 2)
    ]
    read = [(face, v) for face, v in verdicts if isinstance(v, DieRead)]
    assert all(v.value == face for face, v in read), [(f, v.value) for f, v in read]
    assert len(read) >= len(verdicts) // 2
    assert all(v.named == "green d8" for _, v in read)


def test_a_die_of_another_colour_is_left_to_the_reader_as_a_die_not_met(
    taught_d8: object,
) -> None:
    red = replace(GREEN_D8, body=(40, 40, 200), layout=9)
    _, (frame, box) = throws("d8", red, 7, 1)[0]
    found = Unreadable(box, "found")
    assert told(frame, found, (taught_d8,)) is found  # type: ignore[arg-type]


def test_a_die_survives_a_kill_mid_write(tmp_path: Path) -> None:
    die = new_die("white omen", "d20", "numerals", (230.0, 230.0, 230.0))
    crops = np.random.default_rng(0).integers(0, 255, (40, 128, 128, 3), np.uint8)
    save_die(tmp_path, die.with_photos(crops[:1], (20,)))
    writer = textwrap.dedent(
        f"""
        import numpy as np, sys
        from pathlib import Path
        from tidetower.vision.dice.table import load_die, save_die
        die = load_die(Path({str(tmp_path)!r}) / "white-omen{SUFFIX}")
        crops = np.random.default_rng(1).integers(0, 255, (400, 128, 128, 3), np.uint8)
        print("writing", flush=True)
        while True:
            save_die(Path({str(tmp_path)!r}), die.with_photos(crops, (7,) * 400))
        """
    )
    child = subprocess.Popen([sys.executable, "-c", writer], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "writing"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    (back,) = load_dice(tmp_path)
    assert back.name == "white omen" and back.faces[0] == 20 and len(back.faces) in (1, 401)


@pytest.mark.parametrize(
    "content",
    [b"not a zip at all", b"PK\x03\x04" + b"\0" * 64, b""],
    ids=["text", "broken zip", "empty"],
)
def test_a_hostile_dice_file_is_refused_in_one_line(tmp_path: Path, content: bytes) -> None:
    store = tmp_path / "session.db"
    folder = dice_folder(store)
    folder.mkdir()
    (folder / f"evil{SUFFIX}").write_bytes(content)
    result = CliRunner().invoke(cli, ["dice", "list", "--store", str(store)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "evil" in lines[0] and "Traceback" not in result.output


def test_a_dice_file_with_an_impossible_face_is_refused(tmp_path: Path) -> None:
    die = new_die("omen", "d20", "numerals", (1.0, 2.0, 3.0))
    crops = np.zeros((1, 128, 128, 3), np.uint8)
    path = save_die(tmp_path, die.with_photos(crops, (20,)))
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    np.savez(path, **{**arrays, "faces": np.array([21], np.int16)})
    with pytest.raises(DiceFileError, match="cannot show 21"):
        load_dice(tmp_path)


def test_dice_are_listed_renamed_and_forgotten(tmp_path: Path) -> None:
    store = tmp_path / "session.db"
    die = new_die("white omen", "d20", "numerals", (230.0, 230.0, 230.0))
    save_die(dice_folder(store), die.with_photos(np.zeros((2, 128, 128, 3), np.uint8), (1, 20)))
    run = CliRunner().invoke
    assert (
        "white omen: d20, numerals, 2 photos"
        in run(cli, ["dice", "list", "--store", str(store)]).output
    )
    assert run(cli, ["dice", "rename", "white omen", "Omen", "--store", str(store)]).exit_code == 0
    listed = run(cli, ["dice", "list", "--json", "--store", str(store)]).output
    assert '"name": "Omen"' in listed and "white omen" not in listed
    refused = run(cli, ["dice", "forget", "white omen", "--store", str(store)])
    assert refused.exit_code == 1 and "no die named 'white omen'" in refused.output
    assert run(cli, ["dice", "forget", "Omen", "--store", str(store)]).exit_code == 0
    assert "no dice taught yet" in run(cli, ["dice", "list", "--store", str(store)]).output


def test_the_practice_table_teaches_its_dice_by_throwing_them_and_reads_them_by_name() -> None:
    folder = sim_dice_home()  # shared by the run: taught once, by the first test that needs it
    teach_sim_dice(folder)
    assert untaught(folder) == []
    names = {die.name: die for die in load_dice(folder)}
    assert set(names) == {die.name for die in SIM_DICE}
    omen = names["purple omen"]
    assert omen.kind == "d20" and min(omen.taught().values()) >= PER_FACE
    source = SimulatedSource(5, sim_settings())
    settings = ReaderSettings(dice=str(folder))
    said = []
    for _ in range(8):
        if source.dice:
            source.reach_in()
        (truth,) = source.throw(dice=("d20",))
        while not source.idle:
            source.read()
        said += [(truth.value, d) for d in read_dice(source.scene, None, settings).dice]
    assert said and all(d.value == value and d.named == "purple omen" for value, d in said)


def test_a_table_die_the_gm_types_keeps_its_name_in_what_is_kept() -> None:
    unsure = Unreadable((0.1, 0.1, 0.2, 0.2), "omen: its own reader is not sure", "d20", (7, 17))
    asked = Attention("unreadable", "1 die", Reading(unreadable=(replace(unsure, named="omen"),)))
    (typed,) = entered(asked, 0, "d20", 17).reading.dice  # type: ignore[union-attr]
    assert (typed.value, typed.typed, typed.named) == (17, True, "omen")
    (other,) = entered(asked, 0, "d12", 7).reading.dice  # type: ignore[union-attr]
    assert other.named == ""  # the GM says it is another kind: not that die after all


def test_teaching_never_writes_over_a_damaged_die_of_that_name(tmp_path: Path) -> None:
    (tmp_path / f"omen{SUFFIX}").write_bytes(b"not a die")
    die = new_die("omen", "d20", "numerals", (1.0, 2.0, 3.0))
    taught = die.with_photos(np.zeros((1, 128, 128, 3), np.uint8), (20,))
    with pytest.raises(DiceFileError, match="not a die's file"):
        keep_taught(tmp_path, [taught])
    assert (tmp_path / f"omen{SUFFIX}").read_bytes() == b"not a die"


def test_a_table_die_the_gm_types_in_play_joins_its_photos(tmp_path: Path) -> None:
    store = tmp_path / "session.db"
    config = sim_config(store)
    with Tower(config, simulated_parts(config, seed=3)) as tower:
        folder = dice_folder(store)
        before = {die.name: len(die.faces) for die in load_dice(folder)}
        assert set(before) == {die.name for die in SIM_DICE}  # laid out beside the store
        typed: list[DieRead] = []
        tower.loop.on_settled.append(
            lambda _frame, reading: typed.extend(d for d in reading.dice if d.named and d.typed)
        )
        while not typed:  # the simulated GM types a die its own reader was unsure of
            tower.step()
        after = {die.name: die for die in load_dice(folder)}
    (die, *_) = typed
    learnt = after[die.named]
    assert len(learnt.faces) == before[die.named] + 1 and learnt.faces[-1] == die.value
    assert learnt.taught()[die.value] == PER_FACE + 1
    kept = load_dice(sim_dice_home())  # the practice dice kept for every start: unchanged
    assert all(len(d.faces) == before[d.name] for d in kept)
