"""The session store read back as hostile (issue 37): a FIFO named as the store, the modes
a store and its side files are made with, rows that cannot be loaded or are out of bounds,
a store that cannot be read at all, and a clock set back."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.table import Table
from tidetower.mqtt.gm_cli import gm_login
from tidetower.mqtt.settings import MqttSettings

CLI = [sys.executable, "-m", "tidetower.firmware.cli"]
READERS = [
    ["stats", "dice"],
    ["stats", "luck"],
    ["stats", "tracker", "--out", "bar.svg"],
    ["session", "export"],
    ["session", "show"],
]


@pytest.mark.parametrize("command", READERS, ids=lambda c: " ".join(c[:2]))
def test_a_fifo_named_as_the_store_is_refused_in_one_line_never_a_hang(
    tmp_path: Path, command: list[str]
) -> None:
    fifo = tmp_path / "s.db"
    os.mkfifo(fifo)
    done = subprocess.run(
        [*CLI, *command, "--store", str(fifo)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,  # a guard only: before the fix this read blocked for ever
    )
    assert done.returncode == 1, done.stderr
    (said,) = done.stderr.strip().splitlines()
    assert said.startswith("Error: ") and str(fifo) in said
    assert said.endswith("not a regular file (a folder, pipe or device)")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_store_and_its_side_files_are_made_for_their_owner_alone(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    old = os.umask(0o022)
    try:
        with Table(store) as table:
            table.declare(RollContext(pool=2, params={"tier": "d6"}))
            table.record(Roll((Die(DieKind.D6, 6), Die(DieKind.D6, 2))))
            made = [store, *(store.with_name(store.name + s) for s in ("-wal", "-shm", ".lock"))]
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in made}
    finally:
        os.umask(old)
    assert modes == {p.name: 0o600 for p in made}


def test_a_token_others_can_read_is_warned_of_in_one_line_and_still_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token = tmp_path / "gm-token"
    token.write_text("secret\n")
    token.chmod(0o644)
    login = gm_login(MqttSettings(), token, None)
    warned = capsys.readouterr().err.strip().splitlines()
    assert login.password_file == str(token) and login.username == "gm"
    assert len(warned) == 1 and str(token) in warned[0] and "chmod 600" in warned[0]
    token.chmod(0o600)
    gm_login(MqttSettings(), token, None)
    assert capsys.readouterr().err == ""
