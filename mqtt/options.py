"""`--broker HOST:PORT`, `--table NAME` and `--lan` (and a node's `--config`), the same on every
command that talks to a broker; and the exit statuses of a configuration that cannot work and
of a broker the tower lost."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

from tidetower.mqtt.client import BrokerClient
from tidetower.mqtt.settings import MqttSettings, load_mqtt_settings

F = TypeVar("F", bound=Callable[..., object])

CONFIG_EXIT = 78
"""Exit status of a configuration that cannot work as it is (sysexits' EX_CONFIG): a bad
config, a port another program holds. The systemd units do not restart on it
(`RestartPreventExitStatus=`): only a person can fix it."""


BROKER_LOST_EXIT = 75
"""Exit status when the tower's own Mosquitto died too often (sysexits' EX_TEMPFAIL): the
systemd unit restarts the tower on it, and a fresh start begins the count afresh."""


class BrokerLostExit(click.ClickException):
    """A one-line error: the tower's broker was given up on; exits with BROKER_LOST_EXIT."""

    exit_code = BROKER_LOST_EXIT


class ConfigExit(click.ClickException):
    """A one-line error about the configuration; exits with CONFIG_EXIT."""

    exit_code = CONFIG_EXIT


def lan_option(command: F) -> F:
    """Add `--lan` (passed as `lan`): serve the table's LAN, commands guarded by a GM token."""
    return click.option(
        "--lan",
        is_flag=True,
        help="Reachable from the LAN (phones at the table); GM commands need the GM token.",
    )(command)


def broker_options(command: F) -> F:
    """Add `--broker` and `--table` (passed as `broker` and `table`) to a click command."""
    command = click.option(
        "--table", metavar="NAME", help="table name in the topics (overrides the config)"
    )(command)
    return click.option("--broker", metavar="HOST:PORT", help="MQTT broker (overrides the config)")(
        command
    )


def own_broker_options(command: F) -> F:
    """Add `--mqtt-port` and `--ws-port` (passed as `mqtt_port`, `ws_port`): the ports of the
    broker the tower runs itself, so a second tower on this machine can have its own."""
    command = click.option(
        "--ws-port",
        type=click.IntRange(1, 65535),
        metavar="PORT",
        help="WebSockets port of the tower's own broker, for the pages (overrides [mqtt] ws_port).",
    )(command)
    return click.option(
        "--mqtt-port",
        type=click.IntRange(1, 65535),
        metavar="PORT",
        help="MQTT port of the tower's own broker (overrides [mqtt] port; not with --broker).",
    )(command)


def apply_own_ports(
    settings: MqttSettings, mqtt_port: int | None, ws_port: int | None
) -> MqttSettings:
    """`settings` with the own broker's ports from the command line; a usage error when
    the tower uses another broker, whose ports are its own business."""
    changes = {k: v for k, v in (("port", mqtt_port), ("ws_port", ws_port)) if v is not None}
    if changes and not settings.embedded:
        raise click.UsageError(
            "--mqtt-port and --ws-port move the tower's own broker; with --broker or [mqtt]"
            " host the tower uses that one (give its port in HOST:PORT)"
        )
    return settings.model_copy(update=changes)


def node_options(command: F) -> F:
    """Add a node's `--config` (its [mqtt] section is used) and the broker options."""
    command = broker_options(command)
    return click.option(
        "--config",
        "config_path",
        type=click.Path(path_type=Path, dir_okay=False),
        help="tower config (TOML); its [mqtt] section is used",
    )(command)


def apply_broker_options(
    settings: MqttSettings, broker: str | None, table: str | None
) -> MqttSettings:
    """`settings` with the command line's --broker and --table, or a usage error."""
    try:
        return settings.with_broker(broker, table)
    except ValueError as error:
        raise click.UsageError(str(error)) from None


def node_settings(config_path: Path | None, broker: str | None, table: str | None) -> MqttSettings:
    """A node's settings: the config file's [mqtt] section, then the command line."""
    try:
        settings = load_mqtt_settings(config_path)
    except ValueError as error:
        raise ConfigExit(str(error)) from None
    return apply_broker_options(settings, broker, table)


def say_connection(
    client: BrokerClient, echo: Callable[[str], None], say_first_connect: bool = True
) -> Callable[[], bool]:
    """Have a node say when it connects (the first time only if `say_first_connect`), when
    it cannot reach its broker (once an outage, not at every retry) and when it is back.
    The hooks run on the client's network thread; the result tells whether it is down."""
    seen = {"down": False, "connected": False}

    def trouble(sentence: str) -> None:
        if not seen["down"]:
            seen["down"] = True
            echo(f"{sentence}; retrying until it is back")

    def connected() -> None:
        if seen["connected"] or seen["down"] or say_first_connect:
            again = "reconnected" if seen["connected"] else "connected"
            echo(f"{again} to the broker at {client.where}")
        seen.update(down=False, connected=True)

    client.on_trouble.append(trouble)
    client.on_connect.append(connected)
    return lambda: seen["down"]
