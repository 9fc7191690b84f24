"""Every command of the registry reaches each place that lists commands: `tidetower gm`, a
done-sentence, the generated and the documented ACL, the docs' table, the fuzz suite, and the
page where the GM would look for it."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from fuzz_strategies import schema_commands, vocabulary
from hypothesis import find, settings
from test_mqtt_acl import documented_acl

from tidetower.mqtt.gm_cli import gm_command
from tidetower.mqtt.mosquitto import acl_text
from tidetower.mqtt.registry import COMMANDS, reply_line
from tidetower.mqtt.settings import MqttSettings

DOC = Path(__file__).parent.parent / "docs" / "mqtt.md"
PAGE = Path(__file__).parent.parent / "mqtt" / "display"
NAMES = sorted(COMMANDS)
NOT_ON_THE_PAGE = {
    "system": "switching the game is the GM's set-up, `tidetower gm system` or the config"
}
"""Commands the page has no control for, each with why."""
SENT = re.compile(r"(?:send|sendUndo)\([\"'](\w+)[\"']|data-command=\"(\w+)\"")


def _gm_choices() -> tuple[str, ...]:
    """The commands `tidetower gm COMMAND` accepts."""
    (argument,) = [p for p in gm_command.params if p.name == "command"]
    assert isinstance(argument.type, click.Choice)
    return tuple(str(choice) for choice in argument.type.choices)


@pytest.mark.parametrize("name", NAMES)
def test_tidetower_gm_sends_the_command(name: str) -> None:
    assert name in _gm_choices()


@pytest.mark.parametrize("name", NAMES)
def test_the_command_says_what_it_did_in_a_sentence(name: str) -> None:
    said = reply_line({"command": name, "ok": True, "detail": {}}, {})
    assert not said.endswith(": done."), said  # the fallback of a command with no sentence


@pytest.mark.parametrize("name", NAMES)
def test_the_gm_may_send_the_command_through_either_acl(name: str) -> None:
    assert f"topic write tidetower/main/cmd/{name}" in acl_text(MqttSettings()).splitlines()
    assert f"pattern write tidetower/%u/cmd/{name}" in documented_acl().splitlines()


@pytest.mark.parametrize("name", NAMES)
def test_the_command_has_its_row_in_the_docs(name: str) -> None:
    commands = DOC.read_text(encoding="utf-8").split("## Commands", 1)[1]
    assert f"\n| `{name}` |" in commands


@pytest.mark.parametrize("name", NAMES)
def test_the_fuzz_suite_draws_the_command(name: str) -> None:
    quick = settings(database=None, max_examples=2000)
    drawn, _body = find(schema_commands(vocabulary()), lambda it: it[0] == name, settings=quick)
    assert drawn == name


def test_the_page_has_a_control_for_each_command_where_it_belongs() -> None:
    page = "\n".join(f.read_text(encoding="utf-8") for f in sorted(PAGE.glob("*.[hj]*")))
    sent = {a or b for a, b in SENT.findall(page)}
    assert sent == set(NAMES) - set(NOT_ON_THE_PAGE)


def test_every_model_has_one_entry() -> None:
    models = [spec.model for spec in COMMANDS.values()]
    assert len(set(models)) == len(models)
    assert all(spec.name == name for name, spec in COMMANDS.items())
