"""The Pi install as docs/firmware.md describes it: the example config against a Mosquitto,
a port another program holds, pins checked, and the systemd units."""

from __future__ import annotations

import configparser
import json
import shlex
import socket
from pathlib import Path

import click
import cv2
from click.testing import CliRunner
from mqtt_fixtures import Listener, Mosquitto

from tidetower.firmware.cli import main
from tidetower.mqtt.options import CONFIG_EXIT
from tidetower.mqtt.topics import Topics
from tidetower.vision.sources.simulated import SimulatedSource

FIRMWARE = Path(__file__).resolve().parents[1] / "firmware"
EXAMPLE = FIRMWARE / "tidetower.example.toml"


def _example(tmp_path: Path, changes: dict[str, str]) -> Path:
    """The shipped example with its paths in `tmp_path` and each of `changes` made (every
    one must be found, so a change to the example shows here)."""
    text = EXAMPLE.read_text(encoding="utf-8").replace("/var/lib/tidetower", str(tmp_path))
    for old, new in changes.items():
        assert old in text, f"the example has no {old!r} any more"
        text = text.replace(old, new)
    path = tmp_path / "tidetower.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_example_config_starts_against_mosquitto_on_its_port(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    config = _example(
        tmp_path,
        {
            'source = "picamera2"': 'source = "simulated"',
            "port = 1883": f"port = {mosquitto.port}",
            "ws_port = 9001": f"ws_port = {mosquitto.ws_port}",
        },
    )
    topics = Topics.of(mosquitto.settings(table="kitchen"))
    with Listener(mosquitto.settings(table="kitchen"), topics.roll, topics.status) as listener:
        result = CliRunner().invoke(
            main, ["run", "--config", str(config), "--sim", "--rolls", "2", "--json", "--fast"]
        )
        assert result.exit_code == 0, result.output
        assert f"MQTT: broker 127.0.0.1:{mosquitto.port}, table kitchen" in result.stderr
        for line in result.stdout.splitlines():
            roll = json.loads(line)["roll"]
            listener.json_on(topics.roll, lambda b, r=roll: b["id"] == r and b["phase"] == "result")
        listener.wait_for(lambda m: m.topic == topics.status and m.payload == b"offline")
    assert (tmp_path / "session.db").exists()


def test_a_port_another_broker_holds_is_one_line_and_no_restart(tmp_path: Path) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "empty.png"), SimulatedSource(1).empty)
    with socket.socket() as mosquitto:
        mosquitto.bind(("127.0.0.1", 0))
        mosquitto.listen()
        port = mosquitto.getsockname()[1]
        config = _example(
            tmp_path,
            {
                'host = "127.0.0.1"': "",
                "port = 1883": f"port = {port}",
                'source = "picamera2"': f'source = "replay"\npath = "{frames}"',
                "calibration = ": "# calibration = ",
            },
        )
        result = CliRunner().invoke(main, ["run", "--config", str(config), "--sim"])
    assert result.exit_code == CONFIG_EXIT
    (line,) = result.stderr.splitlines()
    assert f"127.0.0.1:{port}: Address already in use" in line and "[mqtt] host" in line


def test_a_page_port_another_program_holds_is_one_line_too() -> None:
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        result = CliRunner().invoke(main, ["display", "--port", str(port)])
    assert result.exit_code == CONFIG_EXIT
    assert result.stderr.splitlines() == [
        f"Error: cannot serve the page on 127.0.0.1:{port}: Address already in use"
    ]


def test_validate_config_refuses_pins_off_the_header_and_two_parts_on_one(
    tmp_path: Path,
) -> None:
    config = _example(tmp_path, {"button_undo = 19": "button_undo = 17", "= 13": "= 28"})
    result = CliRunner().invoke(main, ["run", "--config", str(config), "--validate-config"])
    assert result.exit_code == CONFIG_EXIT
    assert "2 problem(s)" in result.output
    assert "pins.button_undo: Value error, BCM 17 is already pins.drop_sensor" in result.output
    assert "pins.status_blue: Input should be less than or equal to 27 (found 28)" in result.output


def test_every_unit_runs_a_command_that_parses_and_stops_on_a_config_error() -> None:
    units = sorted(FIRMWARE.glob("*.service"))
    names = ["tidetower-display.service", "tidetower-ledbar.service", "tidetower.service"]
    assert [u.name for u in units] == names
    for unit in units:
        service = configparser.ConfigParser(interpolation=None)
        service.read(unit)
        program, name, *args = shlex.split(service["Service"]["ExecStart"])
        assert program == "/opt/tidetower/.venv/bin/tidetower"
        command = main.get_command(click.Context(main), name)
        assert command is not None, name
        args = [str(EXAMPLE) if a == "/etc/tidetower/tidetower.toml" else a for a in args]
        command.make_context(name, args)  # every option exists and takes its value
        stops = service["Service"]["RestartPreventExitStatus"].split()
        assert str(CONFIG_EXIT) in stops, unit.name
        assert "ExecStartPre" not in service["Service"], "systemd restarts a failed pre-step"
