"""LAN play on the tower's own broker: the GM's token, the tower's own login and listener.

Asked for with `[mqtt] lan = true` or `--lan` (or a `bind` beyond loopback), the tower runs
a Mosquitto of its own (mqtt/mosquitto.py). Anyone may connect without a password and read
the table; only two users may publish: the GM (user `gm`, with the token kept in `gm-token`
beside the session store) the table's commands, and the tower itself (user `tower`, its
secret in `tower-secret`) everything else, on a loopback listener of its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path

from tidetower.mqtt.broker import BrokerStartError
from tidetower.mqtt.settings import MqttSettings

GM_USER = "gm"
"""The user name the GM signs in with; the password is the token."""
TOWER_USER = "tower"
TOKEN_FILE, TOWER_FILE = "gm-token", "tower-secret"
_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # nothing to mistake on a phone's keyboard


@dataclass(frozen=True)
class LanAccess:
    """The secrets of one table's LAN broker, kept in `folder` (beside its session store)."""

    folder: Path
    gm_token: str
    tower_secret: str
    tower_port: int
    """The loopback listener only the tower uses, chosen free at each start."""

    @property
    def token_file(self) -> Path:
        """Where the GM's token is kept (0600)."""
        return self.folder / TOKEN_FILE

    @property
    def tower_file(self) -> Path:
        """Where the tower's own secret is kept (0600)."""
        return self.folder / TOWER_FILE

    @property
    def tower_client_id(self) -> str:
        """A client id no guest can guess (128 bits from its secret) nor read anywhere, the
        same at every start, so none can take the tower's session over."""
        return "tidetower-" + hashlib.sha256(self.tower_secret.encode()).hexdigest()[:32]


def lan_access(settings: MqttSettings, folder: Path | None) -> LanAccess | None:
    """The secrets of an embedded broker that serves the LAN, made on its first start; None
    for a broker that stays on this machine or is not the tower's own."""
    if not settings.guarded:
        return None
    if folder is None:
        raise BrokerStartError("[mqtt] lan: no folder to keep the GM token in")
    token, secret = _kept_secret(folder / TOKEN_FILE), _kept_secret(folder / TOWER_FILE)
    return LanAccess(folder, token, secret, _free_loopback_port())


def _free_loopback_port() -> int:
    """A port nothing on loopback listens on now, for the tower's own listener."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _new_secret() -> str:
    """Twelve characters in three groups (about 59 bits): easy to type, hard to guess."""
    chars = "".join(secrets.choice(_ALPHABET) for _ in range(12))
    return "-".join(chars[i : i + 4] for i in range(0, 12, 4))


def _kept_secret(path: Path) -> str:
    """The secret kept in `path`, made on first use; only its owner may read the file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # made by an earlier start: keep it
            write_private(path, _new_secret(), exclusive=True)
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
        secret = path.read_text(encoding="utf-8").strip()
    except OSError as error:
        raise BrokerStartError(f"cannot keep a LAN secret in {path}: {error.strerror}") from None
    if not secret:
        raise BrokerStartError(f"{path} is empty: delete it and a new secret is made")
    return secret


def write_private(path: Path, text: str, exclusive: bool = False) -> None:
    """Write `text` to a file only its owner may read or write (0600 from the start)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    with os.fdopen(os.open(path, flags, 0o600), "w", encoding="utf-8") as file:
        file.write(text + "\n")


def tower_login(settings: MqttSettings, access: LanAccess | None) -> MqttSettings:
    """The settings the tower's own clients connect with: as `tower`, on its own listener,
    with its own client id, on its LAN broker."""
    if access is None:
        return settings
    login = {"username": TOWER_USER, "password_env": None, "password_file": str(access.tower_file)}
    where = {"host": "127.0.0.1", "port": access.tower_port}
    return settings.model_copy(update={**login, **where, "client_id": access.tower_client_id})
