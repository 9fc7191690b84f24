"""`tidetower run`: the tower's main job, on a Pi or on simulated parts."""

from __future__ import annotations

import functools
import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
from gpiozero import BadPinFactory

from tidetower.engine.store import StoreError
from tidetower.engine.systems import DEFAULT_SYSTEM, system_names
from tidetower.firmware.config import (
    ConfigError,
    TowerConfig,
    at_hand,
    config_warnings,
    load_config,
)
from tidetower.firmware.sim import GM_MODES, WHERE_TO_TYPE, sim_config, simulated_parts
from tidetower.firmware.sim_dice import sim_dice_home, teaching_line
from tidetower.firmware.table_dice import DiceFolder
from tidetower.firmware.terminal import print_action, print_roll, print_state, say_trouble
from tidetower.firmware.tower import Tower, TowerParts, real_parts
from tidetower.mqtt.broker import BrokerStartError
from tidetower.mqtt.dice import follow_dice
from tidetower.mqtt.ledbar.terminal import render_bar
from tidetower.mqtt.options import (
    BROKER_LOST_EXIT,
    BrokerLostExit,
    ConfigExit,
    apply_broker_options,
    apply_own_ports,
    broker_options,
    lan_option,
    own_broker_options,
)
from tidetower.mqtt.runtime import table_link
from tidetower.vision.calibrate import CalibrationError
from tidetower.vision.sources import FrameSourceError


def _load(
    config_path: Path | None, sim: bool, store: Path | None, system: str | None
) -> TowerConfig:
    if config_path is None and not sim:
        raise click.UsageError("give --config PATH for a real tower, or --sim to simulate one")
    if system is not None and system not in system_names():
        raise click.BadParameter(
            f"unknown rule system {system!r}: known are {', '.join(system_names())}",
            param_hint="--system",
        )
    try:
        if config_path is not None:
            config = load_config(config_path)
        else:
            assert store is not None, "--sim is given a store by _session_store"
            config = sim_config(store, system or DEFAULT_SYSTEM)
            missing = at_hand(config)
            if missing:
                raise ConfigError("\n".join(missing))
    except ConfigError as error:
        raise ConfigExit(str(error)) from None
    if store is not None:
        config.table.store = store
    if system is not None:
        config.table.system = system
    return config


def tower_parts(config: TowerConfig, sim_seed: int | None, gm: str = "simulated") -> TowerParts:
    """`--sim` (a seed) puts the tower on mock pins, with `gm` playing the GM; a config naming
    the simulated camera brings the people who throw into it, on the Pi's own pins."""
    if sim_seed is not None:
        return simulated_parts(config, sim_seed, gm=gm)
    if config.camera.source == "simulated":
        return simulated_parts(config, 0, mock_pins=False)
    return real_parts(config)


def _start(config: TowerConfig, sim_seed: int | None, gm: str) -> Tower:
    """The tower, or a one-line error saying which part would not start (a camera that is
    not there yet may be later: only that one is worth starting again)."""
    try:
        return Tower(config, tower_parts(config, sim_seed, gm))
    except FrameSourceError as error:
        raise click.ClickException(f"the tower cannot start: {error}") from None
    except (StoreError, CalibrationError, BadPinFactory, ValueError) as error:
        raise ConfigExit(f"the tower cannot start: {error}") from None


@contextmanager
def _session_store(
    sim: bool, config_path: Path | None, store: Path | None
) -> Iterator[tuple[Path | None, bool]]:
    """The store `--sim` uses and whether it is temporary: `--store`, else $TIDETOWER_STORE,
    else one in a temporary folder removed on exit; a real tower's is its config's."""
    if not sim or config_path is not None or store is not None:
        yield store, False
        return
    if os.environ.get("TIDETOWER_STORE"):
        yield Path(os.environ["TIDETOWER_STORE"]), False
        return
    with tempfile.TemporaryDirectory(prefix="tidetower-sim-") as folder:
        yield Path(folder) / "session.db", True


@contextmanager
def _mqtt_link(
    tower: Tower, config: TowerConfig, enabled: bool, kept: bool, stop: threading.Event
) -> Iterator[None]:
    """Publish the table over MQTT while the tower runs (embedded broker if none is set); a
    broker that cannot start stops the tower: asked for MQTT, it must not run without. Its
    own Mosquitto given up on sets `stop`, and the tower exits for systemd to restart it."""
    if not enabled:
        yield
        return
    lost: list[str] = []

    def broker_lost(why: str) -> None:
        lost.append(why)
        stop.set()

    try:
        link = table_link(
            tower.table,
            config.mqtt,
            controls=tower.loop,
            learner=tower.learner,
            announce=functools.partial(click.echo, err=True),
            loop=tower.loop,  # the tower's state and anything it needs the GM for
            store_kept=kept,
            on_broker_lost=broker_lost,
        )
        publisher = link.__enter__()
    except BrokerStartError as error:
        raise ConfigExit(f"MQTT: {_taken_words(error)}") from None
    except ValueError as error:
        raise ConfigExit(f"MQTT: {error}") from None
    tower.loop.before_record.append(lambda reading: publisher.roll_seen(reading.dice))
    follow_dice(publisher, DiceFolder(lambda: tower.table_dice))
    if tower.learner is not None:
        publisher.follow_learning(tower.learner)
    try:
        yield
    finally:
        link.__exit__(None, None, None)
    if lost:
        raise BrokerLostExit(f"MQTT: {lost[0]}: the tower exits {BROKER_LOST_EXIT} to start afresh")


def _taken_words(error: BrokerStartError) -> str:
    """Why the tower's broker did not start and, for a port taken (another tower, a
    Mosquitto), the choices: other ports, that broker, or no MQTT."""
    if error.taken is None:
        return str(error)
    return (
        f"the tower's broker cannot listen on {error.taken}: Address already in use; choose"
        " other ports with --mqtt-port PORT --ws-port PORT (or [mqtt] port, ws_port), use the"
        " broker there with --broker HOST:PORT (or [mqtt] host), or run with --no-mqtt"
    )


def _stop_on_signals(stop: threading.Event) -> None:
    """Ctrl-C stops the tower as SIGTERM does: the step ends, the link closes, exit 0; a
    second Ctrl-C interrupts at once, should closing hang."""

    def stop_now(signum: int, _frame: object) -> None:
        stop.set()
        if signum == signal.SIGINT:
            signal.signal(signal.SIGINT, signal.default_int_handler)

    for stop_signal in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop_signal, stop_now)


def _run(
    tower: Tower, rolls: int | None, realtime: bool, said: list[str], stop: threading.Event
) -> bool:
    """Step the tower until `stop` is set (Ctrl-C, SIGTERM: True), `rolls` more rolls, or a
    replayed camera's end; a full disk is said (`said`: the trouble said last), and goes on."""
    _stop_on_signals(stop)
    target = tower.table.state.rolls + rolls if rolls is not None else None
    period = 1.0 / 10 if realtime else 0.0
    while not stop.is_set():
        started = time.monotonic()
        try:
            tower.step()
        except StoreError as error:  # the simulated players' own change, on a full disk
            say_trouble(f"{error}: free some space", said)
        if target is not None and tower.table.state.rolls >= target:
            return False
        if tower.loop.source_ended is not None:
            click.echo(f"{tower.loop.source_ended}: the tower stops", err=True)
            return False
        time.sleep(max(0.0, period - (time.monotonic() - started)))
    return True


@click.command("run")
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The tower's TOML config.",
)
@click.option("--sim", is_flag=True, help="Simulate sensor, camera and dice: no hardware.")
@click.option("--validate-config", is_flag=True, help="Check the config, print it, and exit.")
@click.option("--rolls", type=click.IntRange(min=1), help="Stop after this many rolls.")
@click.option("--json", "as_json", is_flag=True, help="Print each roll as one JSON line.")
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the simulation, to repeat it."
)
@click.option(
    "--store",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Session store (overrides the config). --sim: else $TIDETOWER_STORE, else a fresh "
    "one in a temporary folder removed on exit.",
)
@click.option("--system", help="Rule system (overrides the config).")
@click.option(
    "--realtime/--fast",
    default=None,
    help="Pace the simulation at 10 frames a second (default: when on a terminal).",
)
@click.option(
    "--mqtt/--no-mqtt",
    "use_mqtt",
    default=True,
    show_default=True,
    help="Publish over MQTT; with no broker configured, start one in-process.",
)
@click.option(
    "--gm",
    type=click.Choice(sorted(GM_MODES)),
    default="simulated",
    show_default=True,
    help="--sim: who plays the GM; person: you declare (gm declare, the page) and the "
    f"players throw that; {WHERE_TO_TYPE}.",
)
@broker_options
@own_broker_options
@lan_option
def run_command(
    config_path: Path | None,
    sim: bool,
    validate_config: bool,
    rolls: int | None,
    as_json: bool,
    seed: int,
    store: Path | None,
    system: str | None,
    realtime: bool | None,
    use_mqtt: bool,
    gm: str,
    broker: str | None,
    table: str | None,
    mqtt_port: int | None,
    ws_port: int | None,
    lan: bool,
) -> None:
    """Run the tower: wait for a throw, read the dice once, resolve, show the bar. Ctrl-C
    or SIGTERM stops it."""
    with _session_store(sim, config_path, store) as (session, temporary):
        config = _load(config_path, sim, session, system)
        config.mqtt = apply_broker_options(config.mqtt, broker, table)
        config.mqtt = apply_own_ports(config.mqtt, mqtt_port, ws_port)
        if lan:
            config.mqtt.lan = True
        warnings = config_warnings(config, sim)
        if validate_config:
            _validated(config, warnings)
            return
        for line in warnings:
            click.echo(f"warning: {line}", err=True)
        if realtime is None:
            realtime = sim and not as_json and sys.stdout.isatty()
        sim_seed = seed if sim else None
        if _run_tower(config, sim_seed, use_mqtt, as_json, temporary, rolls, realtime, gm):
            # the same words for Ctrl-C and SIGTERM, once the tower has closed its session
            kept = "removed with its temporary folder" if temporary else "kept"
            click.echo(f"tower stopped; the session in {config.table.store} is {kept}", err=True)


def _validated(config: TowerConfig, warnings: list[str]) -> None:
    """Print the config as the tower reads it, what it still lacks, and that it is OK."""
    click.echo(json.dumps(config.model_dump(mode="json"), indent=2))
    for line in warnings:
        click.echo(f"warning: {line}", err=True)
    click.echo(f"config OK{f' ({len(warnings)} warning(s) above)' if warnings else ''}", err=True)


def _run_tower(
    config: TowerConfig,
    sim_seed: int | None,
    use_mqtt: bool,
    as_json: bool,
    temporary: bool,
    rolls: int | None,
    realtime: bool,
    gm: str = "simulated",
) -> bool:
    """Start the tower and its MQTT link, say what runs where, and run it; True when it
    was stopped by a signal."""
    if sim_seed is not None and config.camera.source == "simulated":
        click.echo(teaching_line(sim_dice_home()) or "", err=True, nl=False)
    stop = threading.Event()  # set by a signal, or by the tower's own Mosquitto given up
    with (
        _start(config, sim_seed, gm) as tower,
        _mqtt_link(tower, config, use_mqtt, not temporary, stop),
    ):
        tower.loop.on_roll.append(lambda r, reading: print_roll(r, reading, tower, as_json))
        shown: list[str] = []
        said: list[str] = []  # a trouble said once, and again after a roll is kept
        tower.loop.on_roll.append(lambda *_: said.clear())
        tower.loop.on_state.append(lambda state: print_state(state, tower, as_json, shown, said))
        tower.table.listeners.append(lambda event: print_action(event, tower, as_json))
        if not as_json:
            _print_header(config, temporary)
            click.echo(render_bar(tower.table.bar()))
        if sim_seed is not None:
            click.echo(f"sim: {GM_MODES[gm]}", err=True)
        return _run(tower, rolls, realtime, said, stop)


def _print_header(config: TowerConfig, temporary: bool) -> None:
    """The table's name as its topics say it, where its session and tray photos are kept
    (the photos' folder is what `tidetower display --snapshots` takes)."""
    kept = " (a temporary folder, removed on exit)" if temporary else ""
    click.echo(
        f"Tide Tower · table {config.mqtt.table} · system {config.table.system}"
        f" · session in {config.table.store}{kept}"
    )
    photos = config.table.snapshots
    click.echo(f"tray photos in {photos} (tidetower display --snapshots {photos} shows them)")
