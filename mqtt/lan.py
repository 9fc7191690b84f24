"""LAN play on the embedded broker: the GM's token, the tower's own login, who may do what.

Asked for with `[mqtt] lan = true` or `--lan`, the embedded broker listens beyond loopback.
Anyone may connect without a password and read the table; only two users may publish: the
GM (user `gm`, with the token kept in `gm-token` beside the session store) the table's
commands, and the tower itself (user `tower`, its secret in `tower-secret`) everything else.
amqtt's own plugins do the checking: `FileAuthPlugin` (the argon2 hashes of both, written to
`broker-users` at each start) and `TopicAccessControlListPlugin`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher

from tidetower.mqtt.broker import ANONYMOUS, BrokerStartError
from tidetower.mqtt.settings import MqttSettings

GM_USER = "gm"
"""The user name the GM signs in with; the password is the token."""
TOWER_USER = "tower"
TOKEN_FILE, TOWER_FILE, USERS_FILE = "gm-token", "tower-secret", "broker-users"
_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"  # nothing to mistake on a phone's keyboard
_FILE_AUTH = "amqtt.plugins.authentication.FileAuthPlugin"
_ACL = "amqtt.plugins.topic_checking.TopicAccessControlListPlugin"


@dataclass(frozen=True)
class LanAccess:
    """The secrets of one table's LAN broker, kept in `folder` (beside its session store)."""

    folder: Path
    gm_token: str
    tower_secret: str

    @property
    def token_file(self) -> Path:
        """Where the GM's token is kept (0600)."""
        return self.folder / TOKEN_FILE

    @property
    def tower_file(self) -> Path:
        """Where the tower's own secret is kept (0600)."""
        return self.folder / TOWER_FILE

    @property
    def users_file(self) -> Path:
        """amqtt's password file: the argon2 hash of each secret."""
        return self.folder / USERS_FILE


def lan_access(settings: MqttSettings, folder: Path | None) -> LanAccess | None:
    """The secrets of an embedded broker that serves the LAN, made on its first start; None
    for a broker that stays on this machine or is not the tower's own."""
    if not settings.guarded:
        return None
    if folder is None:
        raise BrokerStartError("[mqtt] lan: no folder to keep the GM token in")
    return LanAccess(folder, _kept_secret(folder / TOKEN_FILE), _kept_secret(folder / TOWER_FILE))


def _new_secret() -> str:
    """Twelve characters in three groups (about 59 bits): easy to type, hard to guess."""
    chars = "".join(secrets.choice(_ALPHABET) for _ in range(12))
    return "-".join(chars[i : i + 4] for i in range(0, 12, 4))


def _kept_secret(path: Path) -> str:
    """The secret kept in `path`, made on first use; only its owner may read the file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # made by an earlier start: keep it
            _write_private(path, _new_secret(), exclusive=True)
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
        secret = path.read_text(encoding="utf-8").strip()
    except OSError as error:
        raise BrokerStartError(f"cannot keep a LAN secret in {path}: {error.strerror}") from None
    if not secret:
        raise BrokerStartError(f"{path} is empty: delete it and a new secret is made")
    return secret


def _write_private(path: Path, text: str, exclusive: bool = False) -> None:
    """Write `text` to a file only its owner may read or write (0600 from the start)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    with os.fdopen(os.open(path, flags, 0o600), "w", encoding="utf-8") as file:
        file.write(text + "\n")


def broker_plugins(settings: MqttSettings, access: LanAccess) -> dict[str, Any]:
    """amqtt's plugins for LAN play: anyone reads the table, the GM publishes its commands,
    the tower everything; the password file is written afresh from the kept secrets."""
    hasher = PasswordHasher()
    users = [f"{GM_USER}:{hasher.hash(access.gm_token)}"]
    users.append(f"{TOWER_USER}:{hasher.hash(access.tower_secret)}")
    try:
        _write_private(access.users_file, "\n".join(users))
    except OSError as error:
        raise BrokerStartError(f"cannot write {access.users_file}: {error.strerror}") from None
    base = f"{settings.prefix}/{settings.table}"
    return {
        **ANONYMOUS,
        _FILE_AUTH: {"password_file": str(access.users_file)},
        _ACL: {  # amqtt 0.12's `acl` is the subscribe list (later renamed subscribe-acl)
            "acl": {"anonymous": [f"{base}/#"], GM_USER: [f"{base}/#"], TOWER_USER: ["#"]},
            "publish_acl": {GM_USER: [f"{base}/cmd/+"], TOWER_USER: ["#"]},
        },
    }


def tower_login(settings: MqttSettings, access: LanAccess | None) -> MqttSettings:
    """The settings the tower's own clients connect with: as `tower` on its LAN broker."""
    if access is None:
        return settings
    login = {"username": TOWER_USER, "password_env": None, "password_file": str(access.tower_file)}
    return settings.model_copy(update=login)
