"""The `tidetower` command: one group, each subcommand loaded only when it is used."""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version

import click

# name -> "module:attribute" of a click.Command; loading lazily keeps `--help` fast
# and keeps OpenCV out of commands that never look at a photo.
COMMANDS: dict[str, str] = {
    "run": "tidetower.firmware.run:run_command",
    "calibrate": "tidetower.firmware.calibrate_cli:calibrate_command",
    "demo": "tidetower.firmware.demo:demo_command",
    "session": "tidetower.firmware.session_cli:session_group",
    "odds": "tidetower.firmware.odds_cli:odds_group",
    "stats": "tidetower.firmware.stats_cli:stats_group",
    "read": "tidetower.vision.cli:read_command",
    "teach": "tidetower.firmware.teach_cli:teach_command",
    "dice": "tidetower.firmware.dice_cli:dice_group",
    "ledbar": "tidetower.mqtt.ledbar.node:ledbar_command",
    "display": "tidetower.mqtt.display.server:display_command",
    "gm": "tidetower.mqtt.gm_cli:gm_command",
    "enclosure": "tidetower.enclosure.cli:enclosure_group",
}


def _version() -> str:
    try:
        return version("tidetower")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+unknown"


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), "--version", prog_name="tidetower")
def main() -> None:
    """Tide Tower: a dice tower that reads real dice and keeps the table's tracker."""


if __name__ == "__main__":
    main()
