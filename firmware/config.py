"""The tower's one TOML config: validated at start-up, every error with its key path and value."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from tidetower.enclosure.params import EnclosureParams
from tidetower.engine.files import MAX_DEPTH, BoundedPath, HostileFile, nesting, read_bounded
from tidetower.engine.rules import RuleError
from tidetower.engine.session import new_session
from tidetower.engine.systems import DEFAULT_SYSTEM, get_system
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.towerfiles import DEFAULT_STORE
from tidetower.vision.read import reader_problem
from tidetower.vision.sources.base import SourceConfig
from tidetower.vision.sources.registry import SOURCES, CameraConfig

BcmPin = Annotated[int, Field(ge=0, le=27)]
"""A GPIO pin by its BCM number: 0 to 27 on a Raspberry Pi's 40-pin header."""


class Section(BaseModel):
    """A config section: unknown keys are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


class TableConfig(Section):
    """The table: its rule system and where its session and snapshots live (its name is
    `[mqtt] table`, the one every node, topic and `--table` uses)."""

    system: str = DEFAULT_SYSTEM
    settings: dict[str, Any] = Field(default_factory=dict)
    store: BoundedPath = DEFAULT_STORE
    snapshots: BoundedPath = Path("/var/lib/tidetower/session-snapshots")
    """Unset: `<store's stem>-snapshots` beside the store, so tables never share one."""
    snapshots_keep: int = Field(500, ge=0, le=100_000)
    corrections: BoundedPath = Path("/var/lib/tidetower/session-corrections")
    """Frames the GM finished reading, with the faces that counted: examples to teach from.
    Unset: `<store's stem>-corrections` beside the store."""
    corrections_keep: int = Field(200, ge=0, le=100_000)

    @model_validator(mode="before")
    @classmethod
    def _named_in_mqtt(cls, data: Any) -> Any:
        """An older config's `[table] name` is refused: a second name for the table, which
        the topics, the page and `--table` never used."""
        if isinstance(data, dict) and "name" in data:
            raise ValueError("the table's name is [mqtt] table (its topics use it): move it there")
        return data

    @model_validator(mode="before")
    @classmethod
    def _folders_beside_the_store(cls, data: Any) -> Any:
        """Each table's snapshots and corrections default to folders of its own, named after
        its store: two towers whose stores share a folder never prune each other's files."""
        if not isinstance(data, dict) or not isinstance(data.get("store"), str | Path):
            return data
        store = Path(data["store"])
        data = dict(data)
        for folder in ("snapshots", "corrections"):
            data.setdefault(folder, store.with_name(f"{store.stem}-{folder}"))
        return data

    @field_validator("system")
    @classmethod
    def _system_exists(cls, system: str) -> str:
        try:
            get_system(system)
        except RuleError as error:
            raise ValueError(str(error)) from None
        return system

    @field_validator("settings")
    @classmethod
    def _system_accepts_settings(
        cls, settings: dict[str, Any], info: ValidationInfo
    ) -> dict[str, Any]:
        """The rule system takes these settings (checked at start, not mid-game); its own
        refusal is reported at the key it names (`table.settings.<name>`)."""
        system = info.data.get("system")
        if system is None:  # refused above
            return settings
        try:
            new_session("config", system, settings)
        except RuleError as error:
            top = (error.field or "").split(".")[0]
            key = error.field if top in settings else None
            context = {"message": str(error), "key": key, "value": settings.get(top)}
            raise PydanticCustomError("setting_refused", "{message}", context) from None
        return settings


class PinsConfig(Section):
    """BCM pin numbers of the parts fitted; leave a part out if the tower has none."""

    drop_sensor: BcmPin | None = None
    drop_sensor_pull_up: bool = True
    tray_light: BcmPin | None = None
    status_red: BcmPin | None = None
    status_green: BcmPin | None = None
    status_blue: BcmPin | None = None
    button_side_a: BcmPin | None = None
    button_side_b: BcmPin | None = None
    button_link: BcmPin | None = None
    button_undo: BcmPin | None = None
    button_reread: BcmPin | None = None
    button_tip: BcmPin | None = None
    """Tips the tray clear (`cmd/tip`); only with a servo."""
    servo: BcmPin | None = None

    @field_validator("*")
    @classmethod
    def _one_part_a_pin(cls, value: Any, info: ValidationInfo) -> Any:
        """Two parts on one pin fight over it: the second one named is refused, naming both."""
        if type(value) is not int:  # the pull-up flag, or a part not fitted
            return value
        for other, pin in info.data.items():
            if type(pin) is int and pin == value:
                raise ValueError(f"BCM {value} is already pins.{other}")
        return value


class LoopConfig(Section):
    """Timing of the read loop."""

    settle_frames: int = Field(5, ge=1, le=1000)
    clear_frames: int = Field(3, ge=1, le=1000)
    roll_timeout_s: float = Field(15.0, gt=0, le=3600)
    sensor_timeout_s: float = Field(5.0, gt=0, le=3600)


class TowerConfig(Section):
    """Everything the tower needs to run."""

    table: TableConfig = Field(default_factory=TableConfig)
    camera: CameraConfig
    pins: PinsConfig = Field(default_factory=PinsConfig)
    loop: LoopConfig = Field(default_factory=LoopConfig)
    mqtt: MqttSettings = Field(default_factory=MqttSettings)
    enclosure: EnclosureParams | None = None
    """[enclosure]: the printed tower's parameters (docs/enclosure.md); `tidetower calibrate`
    checks the die size the camera sees against the one they promise."""

    @field_validator("enclosure")
    @classmethod
    def _enclosure_captures_what_the_camera_does(
        cls, enclosure: EnclosureParams | None, info: ValidationInfo
    ) -> EnclosureParams | None:
        """The camera's height was worked out for enclosure.capture: it must be camera.size."""
        camera = info.data.get("camera")
        size = camera.size if isinstance(camera, SourceConfig) else None
        if enclosure is not None and size is not None and tuple(size) != enclosure.capture:
            raise ValueError(
                f"capture {list(enclosure.capture)} is not camera.size {list(size)}: the "
                "camera's height is worked out for the capture size, give the same"
            )
        return enclosure


class ConfigError(ValueError):
    """A config file that cannot be used; the message lists every problem."""


SECRET_WORDS = ("pass", "pw", "secret", "token", "key", "cred", "auth")
"""A key whose name holds one of these may hold a secret (`pass`, `pwd` and `mqtt_pw` are
typos of one): its value is never echoed."""
SHOWN_CHARS = 60
"""An echoed value is cut to this: a 5 MB string is not a 5 MB error line."""


def describe_errors(error: ValidationError) -> str:
    """One line per problem: the key path, what is wrong, and the value found (a plain value
    only: never a whole table, never a secret's)."""
    lines = []
    for problem in map(_at_the_source_key, error.errors()):
        loc = _keys(problem["loc"])
        value = problem.get("input")
        context = problem.get("ctx") or {}
        if problem["type"] == "setting_refused":
            value = context.get("value")
            if context.get("key"):
                loc.append(str(context["key"]))
        path = ".".join(loc) or "(top level)"
        hidden = problem["type"] in ("missing", "extra_forbidden")  # unknown: maybe a secret
        if hidden or isinstance(value, dict | list) or _secret(path):
            lines.append(f"{path}: {problem['msg']}")
        else:
            lines.append(f"{path}: {problem['msg']} (found {_cut(repr(value))})")
    return "\n".join(lines)


def _at_the_source_key(problem: ErrorDetails) -> ErrorDetails:
    """A `[camera]` whose `source` is missing or names no frame source, said at the
    `source` key, as for any other key."""
    context, loc = problem.get("ctx") or {}, (*problem["loc"], "source")
    if problem["type"] == "union_tag_not_found":
        return {**problem, "type": "missing", "loc": loc, "msg": "Field required"}
    if problem["type"] == "union_tag_invalid":
        known = ", ".join(repr(name) for name in SOURCES)
        message = f"Input should be one of {known}"
        return {**problem, "loc": loc, "msg": message, "input": context.get("tag")}
    return problem


def _keys(loc: tuple[int | str, ...]) -> list[str]:
    """The TOML keys of an error's location: pydantic puts the camera's `source` in it
    (`camera.replay.path`), which is no key of the file (`camera.path`)."""
    keys = [str(part) for part in loc]
    if keys[:1] == ["camera"] and keys[1:2] and keys[1] in SOURCES:
        del keys[1]
    return keys


def _secret(path: str) -> bool:
    """True for a key path whose name looks like it holds a secret."""
    return any(word in path.lower() for word in SECRET_WORDS)


def _cut(text: str) -> str:
    """`text` cut to SHOWN_CHARS, saying how much more there was."""
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}… ({len(text)} characters)"


def _secrets_at_hand(config: TowerConfig) -> list[str]:
    """What `run` would die of when it reaches for a secret: an unset `password_env`."""
    name = config.mqtt.password_env
    if name is not None and name not in os.environ:
        return [f"mqtt.password_env: names the environment variable {name!r}, which is not set"]
    return []


def at_hand(config: TowerConfig) -> list[str]:
    """Return what a valid config needs that this machine lacks: a secret, the recogniser."""
    reader = reader_problem(config.camera.reader)
    return _secrets_at_hand(config) + ([reader] if reader else [])


def config_warnings(config: TowerConfig, sim: bool = False) -> list[str]:
    """What the tower lacks but can run without: a calibration not made yet (it then reads
    the whole frame, and a die on the table beside the tray counts). `sim` with the
    simulated camera uses that camera's own empty tray."""
    folder = config.camera.calibration
    if folder is None or folder.exists() or (sim and config.camera.source == "simulated"):
        return []
    return [
        f"camera.calibration {folder} does not exist yet: `tidetower calibrate --config FILE`"
        " makes it; until then the tower reads the whole frame, and dice on the table beside"
        " the tray may count"
    ]


def _toml(path: Path) -> dict[str, Any]:
    """The TOML of a config file: a bounded regular file, nested no deeper than MAX_DEPTH."""
    try:
        raw = read_bounded(path)
        if nesting(raw) > MAX_DEPTH:
            raise ConfigError(f"{path} is nested more than {MAX_DEPTH} deep: not a tower config")
        return tomllib.loads(raw.decode("utf-8"))
    except HostileFile as error:
        raise ConfigError(f"cannot read config {error}") from None
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise ConfigError(
            f"{path} is not UTF-8 text: byte {error.object[error.start]:#04x} on line {line}"
        ) from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path} is not valid TOML: {_cut(str(error))}") from None


def load_config(path: str | Path) -> TowerConfig:
    """Read and validate a TOML config file, or raise ConfigError listing every problem."""
    path = Path(path)
    data = _toml(path)
    try:
        config = TowerConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(
            f"{path} has {error.error_count()} problem(s):\n" + describe_errors(error)
        ) from None
    problems = at_hand(config)
    if problems:
        raise ConfigError(f"{path} has {len(problems)} problem(s):\n" + "\n".join(problems))
    return config
