"""Issue 37 (15, 16): the LAN tower's Mosquitto lives and dies with the tower. A tower killed
with `kill -9` takes its Mosquitto along and starts again on the same ports; one an earlier
tower left running is stopped at start (and no other program); a Mosquitto that dies now and
then is started again for ever, one that dies six times within a minute ends the tower with
a status its systemd unit restarts. Real towers, real Mosquittos, real kills."""

from __future__ import annotations

import configparser
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from mqtt_fixtures import WAIT, Listener, free_port, mosquitto_binary, wait_listening

from tidetower.firmware.cli import main
from tidetower.mqtt import mosquitto
from tidetower.mqtt.lan import GM_USER, lan_access
from tidetower.mqtt.mosquitto import SupervisedMosquitto
from tidetower.mqtt.options import BROKER_LOST_EXIT
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics

UNIT = Path(__file__).parent.parent / "firmware" / "tidetower.service"


def _alive(pid: int) -> bool:
    """True while process `pid` runs (a zombie, dead and not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _until(done: Callable[[], bool], what: str) -> None:
    """Return once `done()` holds; WAIT bounds only a wait that should succeed."""
    deadline = time.monotonic() + WAIT
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _mosquitto_of(parent: int) -> int | None:
    """The running Mosquitto that process `parent` started, if there is one."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, fields = text[text.find("(") + 1 : text.rfind(")")], text.rsplit(")", 1)[-1].split()
        if name == "mosquitto" and fields[0] != "Z" and int(fields[1]) == parent:
            return int(stat.parent.name)
    return None


def _kept_pid(folder: Path) -> int | None:
    """The tower's Mosquitto, as its pidfile names it."""
    try:
        return int((folder / "mosquitto" / "mosquitto.pid").read_text())
    except (OSError, ValueError):
        return None


def _gm_is_answered(folder: Path, port: int) -> None:
    """The GM signs in with the token the tower keeps and is answered by the tower."""
    settings = MqttSettings(
        host="127.0.0.1", port=port, username=GM_USER, password_file=str(folder / "gm-token")
    )
    topics = Topics.of(settings)
    with Listener(settings, topics.command_result, topics.status) as gm:
        gm.wait_for(lambda m: m.topic == topics.status and m.payload == b"online")
        gm.client.publish(topics.command("reread"), json.dumps({"id": "after"}), qos=1)
        assert gm.json_on(topics.command_result, lambda b: b["id"] == "after")


def _tower_online(port: int) -> None:
    """Return once a guest on `port` reads that the tower is online (it has its broker)."""
    wait_listening(port)
    settings = MqttSettings(host="127.0.0.1", port=port)
    status = Topics.of(settings).status
    with Listener(settings, status) as guest:
        guest.wait_for(lambda m: m.topic == status and m.payload == b"online")


class LanTower:
    """`tidetower run --sim --lan` as its own process, on ports of its own."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.port, self.ws_port = folder, free_port(), free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.mosquittos: list[int] = []
        """Every Mosquitto the tower started, for the test to leave none behind."""

    def start(self) -> int:
        """Start the tower; returns its Mosquitto's pid once the GM's port answers."""
        command = [sys.executable, "-m", "tidetower.firmware.cli", "run", "--sim", "--lan"]
        command += ["--store", str(self.folder / "s.db"), "--mqtt-port", str(self.port)]
        command += ["--ws-port", str(self.ws_port)]
        log = (self.folder / "tower.log").open("ab")
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
        process = self.process

        def started() -> bool:
            said = (self.folder / "tower.log").read_text()
            assert process.poll() is None, f"the tower exited {process.returncode}: {said}"
            return _mosquitto_of(process.pid) is not None

        _until(started, "the tower never started its Mosquitto")
        wait_listening(self.port, alive=lambda: process.poll() is None)
        pid = _mosquitto_of(process.pid)
        assert pid is not None
        self.mosquittos.append(pid)
        return pid

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


@pytest.fixture
def lan_tower(tmp_path: Path) -> Iterator[LanTower]:
    tower = LanTower(tmp_path)
    yield tower
    tower.stop()
    for pid in tower.mosquittos:  # never leave a Mosquitto behind, even on a failure
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_tower_killed_outright_takes_its_mosquitto_along_and_starts_again(
    lan_tower: LanTower,
) -> None:
    first = lan_tower.start()
    assert lan_tower.process is not None
    os.kill(lan_tower.process.pid, signal.SIGKILL)
    lan_tower.process.wait()
    _until(lambda: not _alive(first), "the killed tower's Mosquitto is still running")
    second = lan_tower.start()  # the same ports: not refused as taken (exit 78)
    assert second != first
    _gm_is_answered(lan_tower.folder, lan_tower.port)
    lan_tower.stop()
    assert lan_tower.process is not None and lan_tower.process.returncode == 0
    assert not _alive(second) and _kept_pid(lan_tower.folder) is None


def test_a_mosquitto_an_earlier_tower_left_running_is_stopped_at_start(
    lan_tower: LanTower,
) -> None:
    lan_tower.start()
    lan_tower.stop()
    config = lan_tower.folder / "mosquitto" / "mosquitto.conf"
    # as a tower from before (no parent-death signal) would leave it: running, pid noted
    left = subprocess.Popen([mosquitto_binary(), "-c", str(config)], stderr=subprocess.DEVNULL)
    (lan_tower.folder / "mosquitto" / "mosquitto.pid").write_text(f"{left.pid}\n")
    wait_listening(lan_tower.port, alive=lambda: left.poll() is None)
    started = lan_tower.start()
    assert left.wait() == 0 and started != left.pid  # asked to stop, it stopped
    _gm_is_answered(lan_tower.folder, lan_tower.port)
    said = (lan_tower.folder / "tower.log").read_text()
    assert f"stopping the Mosquitto an earlier tower left running (pid {left.pid})" in said


def test_a_pidfile_naming_another_program_leaves_that_program_alone(tmp_path: Path) -> None:
    settings = MqttSettings(port=free_port(), ws_port=free_port(), lan=True, bind="127.0.0.1")
    access = lan_access(settings, tmp_path)
    assert access is not None
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        (tmp_path / "mosquitto").mkdir()
        (tmp_path / "mosquitto" / "mosquitto.pid").write_text(f"{stranger.pid}\n")
        with SupervisedMosquitto(settings, access) as broker:
            assert broker.pid not in (None, stranger.pid)
        assert stranger.poll() is None
    finally:
        stranger.kill()
        stranger.wait()


class Clock:
    """The watcher's clock, moved on by the test: no waiting for a minute to pass."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _kill_and_see_it_back(broker: SupervisedMosquitto, deaths: int) -> None:
    """Kill -9 the running Mosquitto; return once the watcher has started it again."""
    pid = broker.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    _until(
        lambda: broker.restarts >= deaths and broker.pid not in (None, pid),
        f"Mosquitto was not started again after death {deaths}",
    )


@pytest.fixture
def clocked(tmp_path: Path) -> Iterator[tuple[SupervisedMosquitto, Clock]]:
    settings = MqttSettings(port=free_port(), ws_port=free_port(), lan=True, bind="127.0.0.1")
    access = lan_access(settings, tmp_path)
    assert access is not None
    clock = Clock()
    broker = SupervisedMosquitto(settings, access, clock=clock).start()
    yield broker, clock
    broker.stop()


def test_a_mosquitto_that_dies_now_and_then_is_started_again_for_ever(
    clocked: tuple[SupervisedMosquitto, Clock],
) -> None:
    broker, clock = clocked
    for death in range(1, mosquitto.RESTARTS + 3):
        clock.now += mosquitto.RESTART_WINDOW_S + 1  # each death in a window of its own
        _kill_and_see_it_back(broker, death)
    wait_listening(broker.settings.port)
    assert broker.gave_up is None


def test_six_deaths_within_the_window_give_it_up_and_the_tower_is_told(
    clocked: tuple[SupervisedMosquitto, Clock],
) -> None:
    broker, clock = clocked
    told: list[str] = []
    broker.on_give_up.append(told.append)
    for death in range(1, mosquitto.RESTARTS + 1):
        clock.now += mosquitto.RESTART_WINDOW_S / (mosquitto.RESTARTS + 1)
        _kill_and_see_it_back(broker, death)
    last = broker.pid
    assert last is not None
    os.kill(last, signal.SIGKILL)
    _until(lambda: broker.gave_up is not None, "Mosquitto was not given up on")
    assert told == [broker.gave_up]
    assert broker.gave_up.startswith("the tower's Mosquitto died 6 times within 60 s (")
    assert broker.pid is None and not (broker.folder / "mosquitto.pid").exists()


def test_a_tower_whose_mosquitto_keeps_dying_exits_for_systemd_to_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mosquitto, "RESTART_WINDOW_S", float("inf"))  # however slow the kills
    port, finished = free_port(), threading.Event()

    def kill_mosquitto_six_times() -> None:
        killed: list[int] = []
        try:
            _tower_online(port)  # started: a Mosquitto that dies from now on is restarted
            for _ in range(mosquitto.RESTARTS + 1):
                _until(lambda: _kept_pid(tmp_path) not in (None, *killed), "no new Mosquitto")
                pid = _kept_pid(tmp_path)
                assert pid is not None
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        finally:
            if not finished.wait(WAIT):  # a tower that never exits: stop it; the test fails
                os.kill(os.getpid(), signal.SIGTERM)

    killer = threading.Thread(target=kill_mosquitto_six_times, daemon=True)
    killer.start()
    store = ["--store", str(tmp_path / "s.db")]
    ports = ["--mqtt-port", str(port), "--ws-port", str(free_port())]
    result = CliRunner().invoke(main, ["run", "--sim", "--lan", *store, *ports])
    finished.set()
    killer.join()
    assert result.exit_code == BROKER_LOST_EXIT, result.output
    assert "Mosquitto died 6 times" in result.output and "LAN play has stopped" in result.output
    unit = configparser.ConfigParser(strict=False)
    unit.read(UNIT)
    assert unit["Service"]["Restart"] == "on-failure"  # any non-zero status but these:
    assert str(BROKER_LOST_EXIT) not in unit["Service"]["RestartPreventExitStatus"].split()
