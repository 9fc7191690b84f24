"""The enclosure's parameters, in one place: defaults, ranges, and the TOML `[enclosure]` table."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

Mm = Annotated[float, Field(gt=0)]
"""A length in millimetres."""


@dataclass(frozen=True, config=ConfigDict(extra="forbid"))  # a typo in [enclosure] is an error
class EnclosureParams:
    """What a maker may change; every other size is worked out from these (geometry.py)."""

    camera: Literal["cm3", "v2"] = "cm3"
    """Raspberry Pi Camera Module 3 (standard lens) or Camera Module v2."""
    capture: tuple[Annotated[int, Field(ge=160)], Annotated[int, Field(ge=120)]] = (1296, 972)
    """The capture size the tower reads at (the config's camera.size)."""
    tray_width: Annotated[float, Field(ge=60, le=200)] = 150.0
    """Tray floor along the picture's long side (mm)."""
    tray_depth: Annotated[float, Field(ge=40, le=160)] = 112.0
    """Tray floor along the picture's short side (mm)."""
    tray_wall_height: Annotated[float, Field(ge=10, le=40)] = 20.0
    """Tray walls above the floor (mm)."""
    frame_margin: Annotated[float, Field(ge=2, le=40)] = 10.0
    """Floor-level margin around the tray floor that stays inside the picture (mm)."""
    dice: Annotated[int, Field(ge=1, le=30)] = 10
    """Dice of `die_size` the tray holds at once, besides one d20."""
    die_size: Annotated[float, Field(ge=8, le=25)] = 16.0
    """Edge of the table's largest cube die (mm)."""
    d20_size: Annotated[float, Field(ge=10, le=30)] = 20.0
    """The d20 across opposite faces (mm)."""
    min_die: Annotated[float, Field(ge=6, le=25)] = 12.0
    """The smallest die the camera must read (mm)."""
    min_die_px: Annotated[float, Field(ge=10, le=400)] = 40.0
    """Pixels the smallest die must span at the capture size."""
    baffles: Annotated[int, Field(ge=1, le=4)] = 2
    """Baffles in the tower."""
    baffle_angle: Annotated[float, Field(ge=40, le=60)] = 45.0
    """Baffle slope from the horizontal (degrees); 40 or more prints without support."""
    wall: Annotated[float, Field(ge=1.6, le=6)] = 3.0
    """Wall thickness of every printed part (mm); 1.6 is four lines of a 0.4 mm nozzle."""
    light_height: Annotated[float, Field(ge=25, le=80)] = 50.0
    """Height of the light bars' LED line above the tray floor (mm)."""
    glare_margin: Annotated[float, Field(ge=0, le=30)] = 5.0
    """Extra distance beyond which the light's mirror image leaves the picture (mm)."""
    light_strip_width: Annotated[float, Field(ge=5, le=20)] = 8.0
    """Width of the white LED strip in the light bars (mm)."""
    tide_leds: Annotated[int, Field(ge=3, le=600)] = 60
    """LEDs on the table-edge Tide bar (the LED bar's led_count)."""
    tide_leds_per_m: Annotated[int, Field(ge=10, le=200)] = 60
    """LED density of the Tide bar's WS2812 strip."""
    tide_strip_width: Annotated[float, Field(ge=5, le=20)] = 10.0
    """Width of the Tide bar's WS2812 strip (mm)."""
    printer: tuple[Mm, Mm, Mm] = (220.0, 220.0, 250.0)
    """The printer's build volume, x, y and height (mm)."""
    die_px_tolerance: Annotated[float, Field(gt=0, le=1)] = 0.15
    """Calibration warns when the die size it measures differs from the expected by more."""

    def __post_init__(self) -> None:
        """Refuse sizes that make no good tower: too tall to print, a die too small to read."""
        from tidetower.enclosure.fit import problems  # fit works from a validated EnclosureParams

        found = problems(self)
        if found:
            raise ValueError("; ".join(found))


class ParamsError(ValueError):
    """An [enclosure] table that cannot be used; the message lists every problem."""


_ADAPTER = TypeAdapter(EnclosureParams)


def params_from_table(table: object, where: str = "enclosure") -> EnclosureParams:
    """Validate an [enclosure] table, or raise ParamsError naming each key and value."""
    try:
        return _ADAPTER.validate_python(table)
    except ValidationError as error:
        raise ParamsError(_describe(error, where)) from None


def load_params(path: str | Path) -> EnclosureParams:
    """The `[enclosure]` table of a TOML file (a tower config or a file of its own)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ParamsError(f"cannot read {path}: {error}") from None
    if "enclosure" not in data:
        raise ParamsError(f"{path} has no [enclosure] table")
    return params_from_table(data["enclosure"], f"{path}: enclosure")


def _describe(error: ValidationError, where: str) -> str:
    """One line per problem: the key path, what is wrong, and a plain value found."""
    lines = []
    for problem in error.errors():
        key = ".".join(str(part) for part in problem["loc"])
        value = problem.get("input")
        shown = problem["type"] != "missing" and not isinstance(value, dict | list)
        found = f" (found {value!r})" if shown else ""
        lines.append(
            f"{where}.{key}: {problem['msg']}{found}" if key else f"{where}: {problem['msg']}"
        )
    return "\n".join(lines)
