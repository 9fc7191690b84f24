"""The `tidetower` command as a user meets it: --version, --help everywhere, the demo."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from tidetower.firmware.cli import main


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path under `group`, subgroups included."""
    ctx = click.Context(group)
    paths = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        paths.append((*prefix, name))
        if isinstance(command, click.Group):
            paths += _commands(command, (*prefix, name))
    return paths


def test_version() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert re.search(r"tidetower, version \d+\.\d+", result.output)


@pytest.mark.parametrize("path", _commands(main))
def test_every_command_has_help(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


README_COMMANDS = {
    "run",
    "calibrate",
    "read",
    "teach",
    "gm",
    "display",
    "ledbar",
    "demo",
    "session",
    "odds",
    "enclosure",
}
"""The commands README.md's table promises a user."""


def test_every_command_the_readme_promises_loads_and_is_listed() -> None:
    listed = CliRunner().invoke(main, ["--help"])
    ctx = click.Context(main)
    for name in sorted(README_COMMANDS):
        assert isinstance(main.get_command(ctx, name), click.Command), name
        assert re.search(rf"^  {name}\b", listed.output, re.MULTILINE), name
    assert main.get_command(ctx, "fireball") is None


def test_the_demo_plays_to_a_rout_and_is_repeatable() -> None:
    runner = CliRunner()
    first = runner.invoke(main, ["demo", "--no-wait", "--seed", "7", "--practice"])
    assert first.exit_code == 0, first.output
    assert re.search(r"^  [AB] routs!$", first.output, re.MULTILINE)
    assert re.search(r"the bar moves \d+ → \d+", first.output)
    again = runner.invoke(main, ["demo", "--no-wait", "--seed", "7", "--practice"])
    assert again.output == first.output


def test_the_demo_tells_the_tide_s_worked_example_to_its_end() -> None:
    told = CliRunner().invoke(main, ["demo", "--no-wait", "--seed", "7"])
    assert told.exit_code == 0, told.output
    assert "the Emperor's column" in told.output.splitlines()[0]
    for beat in ("Zhao's first order", "Wei at the litter", "Zhao holds the wash"):
        assert f"\n  {beat}\n" in told.output
    routed = re.search(r"^  (Imperial|Mongol) routs!$", told.output, re.MULTILINE)
    assert routed is not None
    epilogue = {"Imperial": "The column breaks and flees.", "Mongol": "Against all odds"}
    assert epilogue[routed.group(1)] in told.output.rstrip().splitlines()[-1]


def test_the_demo_plays_any_system_with_its_settings() -> None:
    args = ["demo", "--no-wait", "--seed", "3", "--system", "d6-pool", "--turns", "3"]
    played = CliRunner().invoke(main, args)
    assert played.exit_code == 0, played.output
    assert played.output.count("\nturn ") == 3 and "hits" in played.output
    set_up = ["demo", "--no-wait", "--practice", "--turns", "1", "--set", "label_a=Imperial"]
    assert "Imperial" in CliRunner().invoke(main, set_up).output
    refused = CliRunner().invoke(main, ["demo", "--no-wait", "--set", "nonsense=1"])
    assert refused.exit_code == 2 and "known are" in refused.output


@pytest.mark.parametrize(
    ("path", "option"),
    [
        (("display",), "--port"),
        (("odds", "roll"), "--set"),
        (("odds", "roll"), "--system"),
        (("demo",), "--set"),
        (("run",), "--mqtt-port"),
        (("run",), "--ws-port"),
    ],
)
def test_every_option_says_what_it_is(path: tuple[str, ...], option: str) -> None:
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None
        command = found
    (param,) = [p for p in command.params if option in getattr(p, "opts", ())]
    assert isinstance(param, click.Option) and param.help


def test_help_speaks_of_rule_systems_and_where_the_session_is() -> None:
    for path in (("odds", "roll"), ("odds", "pool"), ("odds", "d100"), ("demo",)):
        shown = CliRunner().invoke(main, [*path, "--help"]).output
        assert not re.search(r"seed \d{3}", shown), (path, shown)
    store = CliRunner().invoke(main, ["session", "show", "--help"]).output
    assert "$XDG_DATA_HOME" not in store and "TIDETOWER_STORE" in store
