"""The `[mqtt]` section of the tower's config: broker, table, security and the LED bar."""

from __future__ import annotations

import ipaddress
import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from tidetower.engine.files import HostileFile, read_bounded, regular_file

Orientation = Literal["a-first", "b-first"]


class MqttSettings(BaseModel):
    """Where results go and how the LED bar and displays find them; secrets come from env."""

    model_config = ConfigDict(extra="forbid")

    host: str | None = Field(None, description="broker host; None starts an embedded broker")
    port: int = Field(1883, ge=1, le=65535)
    table: str = "main"
    prefix: str = "tidetower"
    username: str | None = None
    password_env: str | None = Field(None, description="environment variable with the password")
    password_file: str | None = Field(None, description="file whose first line is the password")
    tls: bool = False
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    tls_insecure: bool = False
    lan: bool = Field(
        False, description="the embedded broker and the page serve the LAN; commands need a token"
    )
    bind: str | None = Field(
        None, description="address the embedded broker listens on (default: see listen_host)"
    )
    ws_port: int = Field(9001, ge=1, le=65535)
    ws_url: str | None = Field(None, description="MQTT-over-WebSockets URL for the page")
    client_id: str | None = None
    keepalive: int = Field(30, ge=5, le=3600)
    reconnect_min: int = Field(1, ge=1, le=60)
    reconnect_max: int = Field(10, ge=1, le=600)
    max_command_bytes: int = Field(4096, ge=256, le=262144)
    wled_topic: str | None = Field(None, description="WLED's MQTT device topic, e.g. wled/bar")
    led_count: int = Field(60, ge=3, le=4096)
    orientation: Orientation = "a-first"
    brightness: int = Field(128, ge=1, le=255)
    neopixel_pin: int = 18
    ha_discovery: bool = False
    ha_prefix: str = "homeassistant"

    @field_validator("table", "prefix")
    @classmethod
    def _plain_level(cls, value: str) -> str:
        """A table name or prefix is one topic level: no wildcards, slashes or blanks."""
        if not value or any(c in value for c in "+#/ \t\n\0"):
            raise ValueError(f"{value!r} must be one MQTT topic level without +, #, / or spaces")
        return value

    @model_validator(mode="after")
    def _one_password_source(self) -> MqttSettings:
        """A password comes from the environment or from a file, not both."""
        if self.password_env is not None and self.password_file is not None:
            raise ValueError("give password_env or password_file, not both")
        return self

    @property
    def embedded(self) -> bool:
        """True when no broker is configured and the tower runs its own."""
        return self.host is None

    def password(self) -> str | None:
        """The broker password, from the environment variable or the file the config names."""
        if self.password_file is not None:
            return _first_line(Path(self.password_file))
        if self.password_env is None:
            return None
        value = os.environ.get(self.password_env)
        if value is None:
            raise ValueError(f"mqtt.password_env names {self.password_env!r} but it is not set")
        return value

    def listen_host(self) -> str:
        """Where the embedded broker listens: `bind`, else every address with `lan`, else
        loopback only."""
        if self.bind is not None:
            return self.bind
        return "0.0.0.0" if self.lan else "127.0.0.1"

    @property
    def guarded(self) -> bool:
        """True when the embedded broker is reachable beyond this machine, so only the GM's
        token may send commands (asked for with `lan`, or implied by a wider `bind`)."""
        if not self.embedded:
            return False
        return self.lan or not is_loopback(self.listen_host())

    def broker_host(self) -> str:
        """The host clients connect to: the configured broker, or the embedded one."""
        if self.host is not None:
            return self.host
        listen = self.listen_host()
        return "127.0.0.1" if listen in ("0.0.0.0", "::", "") else listen

    def page_ws_url(self) -> str:
        """The WebSockets URL the display page connects to."""
        return self.ws_url or f"ws://{self.broker_host()}:{self.ws_port}/mqtt"

    def with_broker(self, broker: str | None, table: str | None) -> MqttSettings:
        """A copy with `--broker HOST:PORT` and `--table NAME` from the command line applied."""
        changes: dict[str, object] = {}
        if broker:
            host, _, port = broker.rpartition(":")
            if not host or not port.isdigit():
                raise ValueError(f"--broker must be HOST:PORT, got {broker!r}")
            changes.update(host=host, port=int(port))
        if table:
            changes["table"] = table
        return MqttSettings.model_validate({**self.model_dump(), **changes})


def _first_line(path: Path) -> str:
    """The password kept in `path` (its first line), or a ValueError naming the file only."""
    try:
        lines = read_bounded(path, 4096).decode("utf-8").splitlines()
    except (HostileFile, UnicodeDecodeError) as error:
        raise ValueError(f"mqtt.password_file: {_said(error)}") from None
    if not lines or not lines[0].strip():
        raise ValueError(f"mqtt.password_file {path} is empty")
    return lines[0].strip()


def _said(error: Exception) -> str:
    """What went wrong with a file, never what it holds (a password's bytes stay unsaid)."""
    return "not UTF-8 text" if isinstance(error, UnicodeDecodeError) else str(error)


def tls_files(settings: MqttSettings) -> None:
    """Refuse a TLS file that is no regular file of a certificate's size (a FIFO would
    hang the TLS library's read), naming the key."""
    for key in ("ca_file", "cert_file", "key_file"):
        path = getattr(settings, key)
        if path is not None:
            try:
                regular_file(path, 1 << 20)
            except HostileFile as error:
                raise ValueError(f"mqtt.{key}: {error}") from None


def load_mqtt_settings(path: str | Path | None) -> MqttSettings:
    """The `[mqtt]` table of a TOML config file (defaults if no file is given)."""
    if path is None:
        return MqttSettings()
    try:
        data = tomllib.loads(read_bounded(path).decode("utf-8"))
    except HostileFile as error:
        raise ValueError(f"cannot read config {error}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as error:
        said = "nested too deep" if isinstance(error, RecursionError) else str(error)[:200]
        raise ValueError(f"cannot read config {path}: {said}") from None
    try:
        return MqttSettings.model_validate(data.get("mqtt", {}))
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in ("mqtt", *first["loc"]))
        raise ValueError(f"{path}: {where}: {first['msg']}") from None


def is_loopback(host: str) -> bool:
    """True for an address (or `localhost`) that only this machine can reach."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
