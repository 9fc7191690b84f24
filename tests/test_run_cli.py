"""`tidetower run --sim` as scripts and CI use it, and a kill -9 in the middle of it."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import cv2
import pytest
from click.testing import CliRunner
from mqtt_fixtures import Listener, Mosquitto, free_port

from tidetower.engine.systems import system_names
from tidetower.engine.table import Table
from tidetower.firmware.cli import main
from tidetower.firmware.sim_dice import SIM_DICE
from tidetower.mqtt.options import CONFIG_EXIT
from tidetower.mqtt.topics import Topics
from tidetower.vision.sources.simulated import SimulatedSource

RUN = [sys.executable, "-m", "tidetower.firmware.cli"]


def _rolls(output: str) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_sim_prints_one_json_line_per_roll_and_repeats_with_a_seed(tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["run", "--sim", "--rolls", "4", "--json", "--seed", "5", "--fast", "--no-mqtt"]
    first = runner.invoke(main, [*args, "--store", str(tmp_path / "a.db")])
    assert first.exit_code == 0, first.output
    rolls = _rolls(first.output)
    assert [r["seq"] for r in rolls] == [1, 2, 3, 4]
    for roll in rolls:
        kinds = [d["die"] for d in roll["dice"]]
        assert kinds.count("d20") <= 1  # the Omen, thrown with a pool of one tier
        pool = {k for k in kinds if k != "d20"}
        assert len(pool) == 1 and pool <= {"d6", "d8", "d12"}, kinds
        assert {"summary", "facts", "motions"} <= set(roll["outcome"])
        assert 0 <= roll["tide"]["position"] <= roll["tide"]["high"]
    again = _rolls(runner.invoke(main, [*args, "--store", str(tmp_path / "b.db")]).output)
    assert [_story(r) for r in again] == [_story(r) for r in rolls]


@pytest.mark.slow
def test_the_terminal_marks_typed_dice_and_shows_the_gms_actions(tmp_path: Path) -> None:
    args = ["run", "--sim", "--rolls", "120", "--fast", "--no-mqtt", "--seed", "1"]
    result = CliRunner().invoke(main, [*args, "--store", str(tmp_path / "s.db")])
    assert result.exit_code == 0, result.output
    # the simulated GM types each d20 the reader is unsure of, and sets up a new Tide once a
    # side routs: each said as such, the new Tide with its bar
    assert " (typed)" in result.output
    assert re.search(r"GM: set up tide afresh: the bar at 8 of 0\.\.15\n.*collapse", result.output)


def _story(roll: dict) -> tuple:  # type: ignore[type-arg]
    """What a repeat must reproduce (roll ids name the session, which is new each time)."""
    return roll["dice"], roll["outcome"]["summary"], roll["tide"]


@pytest.mark.slow
def test_sim_tide_omens_read_by_the_camera_move_the_bar(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--sim",
            "--rolls",
            "30",
            "--json",
            "--fast",
            "--no-mqtt",
            "--seed",
            "3",
            "--store",
            str(tmp_path / "s.db"),
        ],
    )
    assert result.exit_code == 0, result.output
    rolls = _rolls(result.output)
    with_omen = [r for r in rolls if any(d["die"] == "d20" for d in r["dice"])]
    assert len(with_omen) >= 25
    causes = [m["cause"] for r in rolls for m in r["outcome"]["motions"]]
    assert any(c.startswith("omen") for c in causes), causes


def test_sim_graded_d100_reads_the_tens_and_units_pair(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "run",
            "--sim",
            "--rolls",
            "6",
            "--json",
            "--fast",
            "--no-mqtt",
            "--system",
            "graded-d100",
            "--store",
            str(tmp_path / "s.db"),
        ],
    )
    assert result.exit_code == 0, result.output
    rolls = _rolls(result.output)
    assert len(rolls) == 6
    for roll in rolls:
        assert sorted(d["die"] for d in roll["dice"]) == ["d10", "d10-tens"]
        (pair,) = roll["combined"]
        tens, units = (roll["dice"][i]["value"] for i in pair["dice"])
        assert pair["value"] == (tens + units or 100)
        assert roll["outcome"]["facts"]["roll"] == pair["value"]


@pytest.mark.slow
@pytest.mark.parametrize("system", system_names())
def test_the_sim_throws_what_each_system_needs_and_records_its_rolls(
    tmp_path: Path, system: str
) -> None:
    # a subprocess with a generous timeout: a sim that never records would loop for ever
    done = subprocess.run(
        [
            *RUN,
            "run",
            "--sim",
            "--rolls",
            "3",
            "--json",
            "--fast",
            "--no-mqtt",
            "--system",
            system,
            "--store",
            str(tmp_path / "s.db"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rolls = _rolls(done.stdout)
    assert len(rolls) == 3 and all(roll["system"] == system for roll in rolls)
    assert all(roll["dice"] for roll in rolls), "every roll was thrown and read"


def test_an_unknown_system_is_named_with_the_known_ones() -> None:
    result = CliRunner().invoke(main, ["run", "--sim", "--system", "chess", "--no-mqtt"])
    assert result.exit_code == 2
    assert "unknown rule system 'chess'" in result.output and "d6-pool" in result.output


def test_sim_draws_the_bar_for_people(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        ["run", "--sim", "--rolls", "2", "--fast", "--no-mqtt", "--store", str(tmp_path / "s.db")],
    )
    assert result.exit_code == 0, result.output
    assert "A collapse" in result.output and "B collapse" in result.output


def test_run_needs_a_config_or_sim() -> None:
    result = CliRunner().invoke(main, ["run"])
    assert result.exit_code != 0
    assert "--config" in result.output and "--sim" in result.output


def test_a_kill_mid_roll_loses_no_earlier_roll(tmp_path: Path) -> None:
    store = tmp_path / "session.db"
    cmd = [
        *RUN,
        "run",
        "--sim",
        "--json",
        "--fast",
        "--no-mqtt",
        "--seed",
        "2",
        "--store",
        str(store),
    ]
    tower = subprocess.Popen(
        [*cmd, "--rolls", "1000"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert tower.stdout is not None
    announced = [json.loads(tower.stdout.readline())["roll"] for _ in range(6)]
    os.kill(tower.pid, signal.SIGKILL)
    tower.wait()
    with Table(store) as table:
        kept = [r.id for r in table.state.history]
    assert kept[: len(announced)] == announced
    restarted = subprocess.run(
        [*cmd, "--rolls", "2"], capture_output=True, text=True, timeout=120, check=True
    )
    more = _rolls(restarted.stdout)
    assert [r["seq"] for r in more] == [len(kept) + 1, len(kept) + 2]


def test_sim_with_a_broker_publishes_every_roll(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings().with_broker(f"127.0.0.1:{mosquitto.port}", "sim1")
    topics = Topics.of(settings)
    with Listener(settings, topics.roll, topics.tide, topics.tower) as listener:
        run = subprocess.run(
            [
                *RUN,
                "run",
                "--sim",
                "--rolls",
                "3",
                "--json",
                "--fast",
                "--seed",
                "4",
                "--store",
                str(tmp_path / "s.db"),
                "--broker",
                f"127.0.0.1:{mosquitto.port}",
                "--table",
                "sim1",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        printed = _rolls(run.stdout)
        results = [
            listener.json_on(
                topics.roll, lambda b, i=r["roll"]: b["id"] == i and b["phase"] == "result"
            )
            for r in printed
        ]
        tower = listener.json_on(topics.tower, lambda b: b["state"] == "result")
    with Listener(settings, topics.tide, topics.dice) as late:  # retained: the latest ones
        bar = late.json_on(topics.tide)
        table_dice = late.json_on(topics.dice)
    assert tower["attention"] is None
    # the practice dice laid out beside the store, as the page's Table's dice panel lists them
    assert {d["name"] for d in table_dice["dice"]} == {d.name for d in SIM_DICE}
    assert [r["seq"] for r in results] == [1, 2, 3]
    for line, event in zip(printed, results, strict=True):
        assert [d["value"] for d in event["dice"]] == [d["value"] for d in line["dice"]]
        # a die the simulated GM typed has no confidence, but lies on the camera's box
        assert all((d["confidence"] is None) == d["typed"] and d["box"] for d in event["dice"])
    assert bar["position"] == printed[-1]["tide"]["position"]


def test_a_tower_that_cannot_start_says_why_and_leaves_nothing(tmp_path: Path) -> None:
    store = tmp_path / "session.db"
    config = tmp_path / "tower.toml"
    config.write_text(
        f'[table]\nstore = "{store}"\nsnapshots = "{tmp_path / "snaps"}"\n'
        '[camera]\nsource = "replay"\npath = "/no/such/folder"\n'
    )
    result = CliRunner().invoke(main, ["run", "--config", str(config), "--no-mqtt"])
    assert result.exit_code == 1
    assert "cannot start" in result.output and "/no/such/folder" in result.output
    assert not store.exists()


def test_sim_keeps_its_session_where_tidetower_store_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIDETOWER_STORE", str(tmp_path / "kept.db"))
    args = ["run", "--sim", "--rolls", "1", "--fast", "--no-mqtt"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert f"session in {tmp_path / 'kept.db'}" in first.output
    assert "temporary" not in first.output
    again = CliRunner().invoke(main, [*args, "--json"])
    assert [r["seq"] for r in _rolls(again.stdout)] == [2]  # the same session, resumed


def test_sim_removes_the_temporary_folder_it_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TIDETOWER_STORE", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where temporary folders go
    result = CliRunner().invoke(main, ["run", "--sim", "--rolls", "1", "--fast", "--no-mqtt"])
    assert result.exit_code == 0, result.output
    found = re.search(r"session in (\S+) \(a temporary folder, removed on exit\)", result.output)
    assert found is not None, result.output
    assert Path(found[1]).parent.parent == tmp_path
    assert list(tmp_path.iterdir()) == []


def test_sim_says_which_broker_it_started_and_where(tmp_path: Path) -> None:
    port, ws_port = free_port(), free_port()
    config = tmp_path / "tower.toml"
    config.write_text(
        f'[table]\nstore = "{tmp_path / "s.db"}"\nsnapshots = "{tmp_path / "snaps"}"\n'
        f'corrections = "{tmp_path / "fixed"}"\n[camera]\nsource = "simulated"\n'
        f"[mqtt]\nport = {port}\nws_port = {ws_port}\n"
    )
    result = CliRunner().invoke(
        main, ["run", "--config", str(config), "--sim", "--rolls", "1", "--fast"]
    )
    assert result.exit_code == 0, result.output
    assert (
        f"MQTT broker started in this process: TCP 127.0.0.1:{port}, WebSockets {ws_port},"
        " this machine only (--lan lets the table's phones join)"
    ) in result.stderr


@pytest.mark.parametrize("table", [None, "north"])
def test_the_sim_names_its_table_as_its_topics_do(
    mosquitto: Mosquitto, tmp_path: Path, table: str | None
) -> None:
    """Issue 27 (3): the name `run --sim` prints is the one its topics (and so `tidetower gm
    --table`, the page) use: `main` by default, not a second name `sim`."""
    settings = mosquitto.settings()
    where = ["--broker", f"127.0.0.1:{mosquitto.port}", *(["--table", table] if table else [])]
    args = ["run", "--sim", "--rolls", "1", "--fast", "--store", str(tmp_path / "s.db"), *where]
    with Listener(settings, f"{settings.prefix}/+/tide") as listener:
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        published = listener.wait_for(lambda m: m.topic.endswith("/tide")).topic.split("/")[1]
    printed = re.search(r"· table (\S+) ·", result.stdout)
    assert printed is not None and printed[1] == published == (table or "main")
    assert f"tray photos in {tmp_path / 's-snapshots'} (tidetower display --snapshots" in (
        result.stdout
    )  # issue 27 (4): what the one-laptop display is to be given


def test_an_older_configs_table_name_is_refused_naming_where_it_lives(tmp_path: Path) -> None:
    config = tmp_path / "tower.toml"
    config.write_text('[table]\nname = "kitchen"\n[camera]\nsource = "simulated"\n')
    result = CliRunner().invoke(main, ["run", "--config", str(config), "--validate-config"])
    assert result.exit_code != 0 and "[mqtt] table" in result.output


def _lines_matching(text: str, start: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(start)]


@pytest.mark.parametrize("kept", [False, True])
def test_a_broker_out_of_reach_is_said_at_once_and_at_each_roll(tmp_path: Path, kept: bool) -> None:
    port = free_port()  # nothing listens there
    store = ["--store", str(tmp_path / "s.db")] if kept else []
    env = {k: v for k, v in os.environ.items() if k != "TIDETOWER_STORE"}
    run = subprocess.run(
        [
            *RUN,
            "run",
            "--sim",
            "--rolls",
            "3",
            "--json",
            "--fast",
            "--broker",
            f"127.0.0.1:{port}",
            *store,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=env,
    )
    where = f"127.0.0.1:{port}"
    said = run.stderr.splitlines()
    first = said.index(f"cannot reach the broker at {where}; retrying until it is back")
    reminders = _lines_matching(run.stderr, f"the broker at {where} is still out of reach")
    assert 1 <= len(reminders) <= 3, run.stderr  # once a roll while it lasts, not each retry
    (last,) = _lines_matching(run.stderr, "stopping with")
    assert first < said.index(last)
    promise = "they go out next start"
    dropped = "they are dropped with the temporary session"
    assert all((promise in line) == kept for line in [*reminders, last]), run.stderr
    assert all((dropped in line) != kept for line in [*reminders, last]), run.stderr


def test_a_second_sim_on_taken_ports_stops_naming_the_port_and_the_choices(
    tmp_path: Path,
) -> None:
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        base = [*RUN, "run", "--sim", "--rolls", "1", "--json", "--fast"]
        base += ["--store", str(tmp_path / "s.db"), "--mqtt-port", str(port)]
        taken = subprocess.run(base, capture_output=True, text=True, timeout=120)
        off = subprocess.run([*base, "--no-mqtt"], capture_output=True, text=True, timeout=120)
    assert taken.returncode == CONFIG_EXIT and taken.stdout == ""
    (line,) = taken.stderr.splitlines()
    assert f"127.0.0.1:{port}: Address already in use" in line
    assert all(option in line for option in ("--mqtt-port", "--ws-port", "--no-mqtt"))
    assert off.returncode == 0 and len(_rolls(off.stdout)) == 1


def test_the_towers_own_broker_listens_on_the_ports_given(tmp_path: Path) -> None:
    port, ws_port = free_port(), free_port()
    run = subprocess.run(
        [
            *RUN,
            "run",
            "--sim",
            "--rolls",
            "1",
            "--json",
            "--fast",
            "--store",
            str(tmp_path / "s.db"),
            "--mqtt-port",
            str(port),
            "--ws-port",
            str(ws_port),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert f"TCP 127.0.0.1:{port}, WebSockets {ws_port}," in run.stderr
    assert "cannot reach" not in run.stderr and "lost the broker" not in run.stderr


def test_own_broker_ports_with_another_broker_are_a_usage_error() -> None:
    result = CliRunner().invoke(
        main, ["run", "--sim", "--broker", "127.0.0.1:1883", "--mqtt-port", "1884"]
    )
    assert result.exit_code == 2
    assert "--mqtt-port and --ws-port move the tower's own broker" in result.output


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_stops_the_tower_as_sigterm_does(tmp_path: Path, stop: signal.Signals) -> None:
    store = tmp_path / "session.db"
    tower = subprocess.Popen(
        [*RUN, "run", "--sim", "--json", "--fast", "--no-mqtt", "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert tower.stdout is not None
    json.loads(tower.stdout.readline())  # a roll: the tower runs
    tower.send_signal(stop)
    stdout, stderr = tower.communicate(timeout=120)
    assert tower.returncode == 0, stderr
    assert stderr.splitlines()[-1] == f"tower stopped; the session in {store} is kept"
    assert "Aborted" not in stderr and "Traceback" not in stderr
    with Table(store) as table:
        assert len(table.state.history) >= 1 + len(_rolls(stdout))


def test_a_tower_not_calibrated_yet_reads_and_says_what_makes_the_calibration(
    tmp_path: Path,
) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "empty.png"), SimulatedSource(1).empty)
    config = tmp_path / "tower.toml"
    config.write_text(
        f'[table]\nstore = "{tmp_path / "s.db"}"\nsnapshots = "{tmp_path / "snaps"}"\n'
        f'[camera]\nsource = "replay"\npath = "{frames}"\n'
        f'calibration = "{tmp_path / "calibration"}"\n'
    )
    result = CliRunner().invoke(main, ["run", "--config", str(config), "--no-mqtt", "--json"])
    assert result.exit_code == 0, result.output
    assert "the tower stops" in result.stderr  # it ran to the replayed camera's end
    assert result.stderr.startswith(
        f"warning: camera.calibration {tmp_path / 'calibration'} does not exist yet:"
        " `tidetower calibrate --config FILE` makes it"
    )
