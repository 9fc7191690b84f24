"""`tidetower run --sim --gm person`: a practice table where a person is the GM. The players
throw only what the GM declared, in its pool and tier, and wait for the GM on a die the
camera cannot read (issue 27)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from click.testing import CliRunner

from tidetower.engine.dice import DieKind
from tidetower.engine.rules import RollContext
from tidetower.engine.tray import TowerState
from tidetower.firmware.cli import main
from tidetower.firmware.sim import SimulatedTable, beside, sim_config, simulated_parts
from tidetower.firmware.tower import Tower

FRAMES = 400
"""Frames to step: far more than a throw takes to settle (a bound, not a timing)."""


def _players(tower: Tower) -> SimulatedTable:
    assert isinstance(tower.extras, SimulatedTable)
    return tower.extras


def test_the_players_wait_for_the_gm_and_throw_what_was_declared(tmp_path: Path) -> None:
    config = sim_config(tmp_path / "s.db")
    with Tower(config, simulated_parts(config, 7, gm="person")) as tower:
        players = _players(tower)
        for _ in range(FRAMES):
            tower.step()
        assert players.thrown == [] and tower.table.state.history == ()  # nothing declared
        zhao = RollContext(actor="Zhao", side="a", mode="tide", pool=4)
        tower.table.declare(replace(zhao, params={"tide_linked": True, "tier": "d8"}))
        for _ in range(FRAMES):
            tower.step()
            if players.thrown:
                break
        assert [d.die for d in players.thrown[0]] == ["d8"] * 4 + ["d20"]


def test_a_die_the_camera_cannot_read_waits_for_the_person(tmp_path: Path) -> None:
    config = sim_config(tmp_path / "s.db")
    with Tower(config, simulated_parts(config, 7, gm="person")) as tower:
        players = _players(tower)
        for _ in range(20):  # declare until a throw needs the GM
            tower.table.declare(RollContext(actor="Zhao", side="a", pool=5, params={"tier": "d12"}))
            for _ in range(FRAMES):
                tower.step()
                if tower.loop.state in (TowerState.NEEDS_ATTENTION, TowerState.RESULT):
                    break
            if tower.loop.state is TowerState.NEEDS_ATTENTION:
                break
            while tower.loop.state is not TowerState.IDLE:
                tower.step()
        assert tower.loop.state is TowerState.NEEDS_ATTENTION, (
            f"{len(players.thrown)} throws all read"
        )
        for _ in range(FRAMES):
            tower.step()
        assert tower.loop.state is TowerState.NEEDS_ATTENTION and players.gm_fixes == 0


def test_run_says_who_plays_the_gm(tmp_path: Path) -> None:
    simulated = CliRunner().invoke(
        main, ["run", "--sim", "--rolls", "1", "--no-mqtt", "--store", str(tmp_path / "s.db")]
    )
    assert simulated.exit_code == 0 and "sim: the GM is simulated" in simulated.output
    command = ["run", "--sim", "--gm", "person", "--no-mqtt", "--fast"]
    person = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tidetower.firmware.cli",
            *command,
            "--store",
            str(tmp_path / "p.db"),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert person.stderr is not None
        said = ""
        while "sim: " not in said:  # what it says on starting, before any roll
            said = person.stderr.readline()
            assert said, "the tower ended without saying who plays the GM"
        assert said.startswith("sim: you are the GM"), said
        assert WHERE_TO_TYPE in said  # issue 37 (5): this terminal reads nothing typed
    finally:
        person.terminate()
        person.wait()


WHERE_TO_TYPE = (
    "enter each die the camera cannot read on the page (`tidetower display`) or with "
    "`tidetower gm die index=N kind=KIND value=FACE`; this terminal reads no typing"
)


def test_run_help_says_where_the_person_gm_types() -> None:
    shown = " ".join(CliRunner().invoke(main, ["run", "--help"]).output.split())
    assert "this terminal reads no typing" in shown and "tidetower gm die index=N" in shown


def test_the_declared_dice_come_with_the_practice_dice_beside_its_pool() -> None:
    d6, d8, d20 = DieKind.D6, DieKind.D8, DieKind.D20
    assert beside((d6, d6, d6, d20), (d8, d8)) == (d20,)  # the Omen, not the practice's pool
    assert beside((d6, d6), (d8,)) == ()
    assert beside((d6, d20), (d20, d20)) == ()  # already declared
    assert beside((), (d8,)) == ()
