"""The tower's parts as gpiozero devices: drop sensor, tray light, status LED, buttons, servo."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gpiozero import PWMLED, RGBLED, AngularServo, Button, DigitalInputDevice
from gpiozero.pins import Factory

from tidetower.engine.tray import TowerState
from tidetower.firmware.config import PinsConfig

RGB = tuple[float, float, float]
# state -> (colour, blink on/off seconds or None for steady); see docs/firmware.md
STATUS_PATTERNS: dict[TowerState, tuple[RGB, tuple[float, float] | None]] = {
    TowerState.IDLE: ((0.0, 0.0, 0.15), None),  # dim blue
    TowerState.ROLLING: ((1.0, 0.8, 0.0), (0.1, 0.1)),  # yellow, fast blink
    TowerState.SETTLING: ((1.0, 0.8, 0.0), None),  # yellow
    TowerState.READING: ((1.0, 1.0, 1.0), None),  # white
    TowerState.RESULT: ((0.0, 1.0, 0.0), None),  # green
    TowerState.WAITING_FOR_CLEAR: ((0.0, 0.3, 0.0), None),  # dim green
    TowerState.NEEDS_ATTENTION: ((1.0, 0.4, 0.0), (0.5, 0.5)),  # amber, slow blink
    TowerState.ERROR: ((1.0, 0.0, 0.0), (0.1, 0.1)),  # red, fast blink
}


class StatusLight:
    """An RGB LED that shows the tower's state as a colour and pattern."""

    def __init__(self, red: int, green: int, blue: int, pin_factory: Factory | None = None):
        self.led = RGBLED(red, green, blue, pin_factory=pin_factory)
        self.state: TowerState | None = None

    def show(self, state: TowerState) -> None:
        """Switch to the pattern of `state`."""
        colour, blink = STATUS_PATTERNS[state]
        self.state = state
        if blink is None:
            self.led.color = colour
        else:
            self.led.blink(on_time=blink[0], off_time=blink[1], on_color=colour)

    def close(self) -> None:
        """Turn off and release the pins."""
        self.led.close()


BUTTONS = ("side_a", "side_b", "link", "undo", "reread", "tip")


class TowerDevices:
    """Every part named in the pin config; parts left out are None."""

    def __init__(self, pins: PinsConfig, pin_factory: Factory | None = None) -> None:
        self.drop_sensor: DigitalInputDevice | None = None
        if pins.drop_sensor is not None:
            # A break-beam receiver pulls its output low while the beam is broken.
            self.drop_sensor = DigitalInputDevice(
                pins.drop_sensor, pull_up=pins.drop_sensor_pull_up, pin_factory=pin_factory
            )
        self.tray_light = _optional(PWMLED, pins.tray_light, pin_factory)
        self.status: StatusLight | None = None
        red, green, blue = pins.status_red, pins.status_green, pins.status_blue
        if red is not None and green is not None and blue is not None:
            self.status = StatusLight(red, green, blue, pin_factory)
        self.buttons: dict[str, Button] = {}
        for name in BUTTONS:
            pin = getattr(pins, f"button_{name}")
            if pin is not None:
                # 50 ms debounce: one press of undo must take back one roll, not two.
                self.buttons[name] = Button(pin, bounce_time=0.05, pin_factory=pin_factory)
        self.servo: AngularServo | None = None
        if pins.servo is not None:  # level at min_angle (-90°), from boot on
            self.servo = AngularServo(pins.servo, initial_angle=-90, pin_factory=pin_factory)

    def on_press(self, name: str, action: Callable[[], None]) -> None:
        """Run `action` when the button `name` is pressed, if the tower has that button."""
        if name in self.buttons:
            self.buttons[name].when_pressed = action

    def light_tray(self, on: bool) -> None:
        """Steady light on the tray while reading, for an even exposure."""
        if self.tray_light is not None:
            self.tray_light.value = 1.0 if on else 0.0

    def tip_tray(self, tipped: bool) -> None:
        """Tip the tray to pour the dice out, or set it level again, if a servo is fitted."""
        if self.servo is not None:
            self.servo.angle = self.servo.max_angle if tipped else self.servo.min_angle

    def show(self, state: TowerState) -> None:
        """Show the state on the status LED, if fitted."""
        if self.status is not None:
            self.status.show(state)

    def close(self) -> None:
        """Release every pin."""
        parts: list[Any] = [
            self.drop_sensor,
            self.tray_light,
            self.status,
            self.servo,
            *self.buttons.values(),
        ]
        for part in parts:
            if part is not None:
                part.close()

    def __enter__(self) -> TowerDevices:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _optional(kind: Any, pin: int | None, pin_factory: Factory | None) -> Any:
    return None if pin is None else kind(pin, pin_factory=pin_factory)
