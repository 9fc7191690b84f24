"""`tidetower ledbar`: the table's retained tracker drawn on WLED, a NeoPixel strip or the
terminal, as its kind (the payload's `tracker`) says.

Each new bar is animated (the marker walks; a rout flashes the winner's colour); a newer
bar cuts a running animation short so the strip never lags behind the table.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import click
from pydantic import ValidationError

from tidetower.engine.rules import BarState, Motion
from tidetower.mqtt.client import BrokerClient, Message, secret_client_id
from tidetower.mqtt.ledbar.strip import FRAME_GAP, Frame, animation, pixels, wled_state
from tidetower.mqtt.ledbar.terminal import render_bar
from tidetower.mqtt.options import node_options, node_settings, say_connection
from tidetower.mqtt.payloads import BarPayload
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics

log = logging.getLogger(__name__)


class Renderer(Protocol):
    """Somewhere the bar is drawn."""

    def show(self, frame: Frame, bar: BarPayload) -> None:
        """Draw one animation frame of `bar`."""

    def settle(self, bar: BarPayload) -> None:
        """The animation is over; `bar` is what the table shows now."""


class Pacer:
    """At most one message every `gap` seconds: `wait` sleeps off what is left of the gap."""

    def __init__(
        self,
        gap: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.gap, self.clock, self.sleep = gap, clock, sleep
        self._last: float | None = None

    def wait(self) -> None:
        """Return once `gap` seconds have passed since the previous call returned."""
        if self._last is not None and (left := self._last + self.gap - self.clock()) > 0:
            self.sleep(left)
        self._last = self.clock()


class WledRenderer:
    """WLED over MQTT: segments posted to `<wled topic>/api`, re-sent when WLED comes online;
    never more than one message per FRAME_GAP, even when a newer bar cuts an animation."""

    def __init__(self, client: BrokerClient, topic: str, pacer: Pacer | None = None) -> None:
        self.client, self.topic = client, topic
        self.pacer = pacer or Pacer(FRAME_GAP)
        self._last: Frame | None = None
        client.subscribe(f"{topic}/status", self._status, qos=1)

    def show(self, frame: Frame, bar: BarPayload) -> None:
        self._last = frame
        self.pacer.wait()
        self._send(frame)

    def settle(self, bar: BarPayload) -> None:
        """Nothing more: the last frame is the bar."""

    def _send(self, frame: Frame) -> None:
        self.client.publish(f"{self.topic}/api", json.dumps(wled_state(frame)), qos=0)

    def _status(self, message: Message) -> None:
        if message.payload == b"online" and self._last is not None:
            self._send(self._last)


class NeoPixelRenderer:
    """A WS2812 strip on the Pi's GPIO through Adafruit's NeoPixel library (extra `ledstrip`)."""

    def __init__(self, count: int, pin: int, brightness: int) -> None:
        try:
            board = importlib.import_module("board")
            neopixel = importlib.import_module("neopixel")
        except ImportError as error:
            raise click.ClickException(
                f"--neopixel needs Adafruit's NeoPixel library ({error.name} is missing): "
                "pip install 'tidetower[ledstrip]'"
            ) from None
        self.count = count
        self.strip: Any = neopixel.NeoPixel(
            getattr(board, f"D{pin}"), count, brightness=brightness / 255, auto_write=False
        )

    def show(self, frame: Frame, bar: BarPayload) -> None:
        for index, colour in enumerate(pixels(frame, self.count)):
            self.strip[index] = colour
        self.strip.show()

    def settle(self, bar: BarPayload) -> None:
        """Nothing more: the last frame is the bar."""


class TerminalRenderer:
    """The terminal bar of `tidetower demo`, printed once each animation settles."""

    def __init__(self, echo: Callable[[str], None] = click.echo) -> None:
        self.echo = echo

    def show(self, frame: Frame, bar: BarPayload) -> None:
        """Frames are for LEDs; the terminal prints the settled bar."""

    def settle(self, bar: BarPayload) -> None:
        motion = bar.last_motion
        if motion is not None:
            self.echo(f"{motion.cause}: {motion.before} → {motion.after}")
        self.echo(render_bar(bar_state(bar), bar.tracker))


def bar_state(bar: BarPayload) -> BarState:
    """The engine's BarState from the wire, for the terminal renderer."""
    motion = bar.last_motion
    return BarState(
        system=bar.system,
        low=bar.low,
        high=bar.high,
        position=bar.position,
        label_a=bar.label_a,
        label_b=bar.label_b,
        colour_a=bar.colour_a,
        colour_b=bar.colour_b,
        routed=bar.routed,
        last_motion=Motion(motion.cause, motion.before, motion.after) if motion else None,
        segments=tuple(bar.segments),
    )


class LedbarNode:
    """Follows one table's retained tracker (`Topics.tide`) and animates it on every
    renderer."""

    def __init__(self, settings: MqttSettings, client: BrokerClient | None = None) -> None:
        self.settings = settings
        self.topics = Topics.of(settings)
        self.client = client or BrokerClient(
            settings, settings.client_id or secret_client_id(f"tidetower-ledbar-{settings.table}-")
        )
        self.renderers: list[Renderer] = []
        self._bars: queue.Queue[BarPayload | None] = queue.Queue()
        self._arrived = threading.Event()
        self._thread = threading.Thread(target=self._animate, name="ledbar", daemon=True)
        self.client.subscribe(self.topics.tide, self._on_bar, qos=1)

    def start(self) -> LedbarNode:
        self._thread.start()
        self.client.start()
        return self

    def stop(self) -> None:
        self._bars.put(None)
        self._arrived.set()
        self._thread.join(5)
        self.client.stop()

    def __enter__(self) -> LedbarNode:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _on_bar(self, message: Message) -> None:
        try:
            self._bars.put(BarPayload.model_validate_json(message.payload))
        except ValidationError as error:
            log.warning("ignoring a tracker message that does not fit schema 1: %s", error)
            return
        self._arrived.set()

    def _latest(self, bar: BarPayload) -> BarPayload | None:
        """The newest bar waiting (None means stop); older ones are skipped, not replayed."""
        self._arrived.clear()
        latest: BarPayload | None = bar
        while not self._bars.empty():
            latest = self._bars.get_nowait()
            if latest is None:
                return None
        return latest

    def _animate(self) -> None:
        previous: BarPayload | None = None
        while (bar := self._bars.get()) is not None:
            if (bar := self._latest(bar)) is None:
                return
            if bar == previous:
                continue  # the same bar again (a re-published retained state)
            try:
                self._draw(previous, bar)
            except Exception:  # one bar it cannot draw must not stop the next ones
                log.exception("drawing the bar at %s failed; waiting for the next", bar.position)
                continue
            previous = bar

    def _draw(self, previous: BarPayload | None, bar: BarPayload) -> None:
        """Move the marker from `previous` to `bar`, frame by frame, on every renderer."""
        steps = animation(previous, bar, self.settings.led_count, self.settings.orientation)
        for step in steps:
            for renderer in self.renderers:
                renderer.show(step.frame, bar)
            if self._arrived.wait(step.hold):
                break  # a newer bar is waiting: draw that instead
        for renderer in self.renderers:
            renderer.settle(bar)


def _renderers(
    node: LedbarNode, wled: str | None, neopixel: bool, terminal: bool
) -> Sequence[Renderer]:
    settings = node.settings
    chosen: list[Renderer] = []
    if wled:
        chosen.append(WledRenderer(node.client, wled))
    if neopixel:
        chosen.append(
            NeoPixelRenderer(settings.led_count, settings.neopixel_pin, settings.brightness)
        )
    if terminal or not chosen:
        chosen.append(TerminalRenderer())
    return chosen


@click.command("ledbar")
@node_options
@click.option("--wled", metavar="TOPIC", help="WLED's MQTT device topic, e.g. wled/bar")
@click.option("--neopixel", is_flag=True, help="drive a WS2812 strip on this Pi's GPIO")
@click.option("--terminal", is_flag=True, help="draw the bar here too (the default output)")
@click.option("--leds", type=click.IntRange(3, 4096), help="number of LEDs on the strip")
@click.option(
    "--orientation",
    type=click.Choice(["a-first", "b-first"]),
    help="which side's end of a two-sided bar is at LED 0",
)
def ledbar_command(
    config_path: Path | None,
    broker: str | None,
    table: str | None,
    wled: str | None,
    neopixel: bool,
    terminal: bool,
    leds: int | None,
    orientation: str | None,
) -> None:
    """Show the table's tracker on an LED bar (WLED, NeoPixel) or in this terminal."""
    settings = node_settings(config_path, broker, table)
    strip = {"led_count": leds, "orientation": orientation}
    settings = settings.model_copy(update={k: v for k, v in strip.items() if v is not None})
    node = LedbarNode(settings)
    node.renderers.extend(_renderers(node, wled or settings.wled_topic, neopixel, terminal))
    click.echo(
        f"following {node.topics.tide} on {settings.broker_host()}:{settings.port}", err=True
    )
    say_connection(node.client, lambda line: click.echo(line, err=True))
    with node, contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()
