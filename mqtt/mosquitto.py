"""The tower's own Mosquitto for LAN play: its config, users and ACL written, kept running.

On the LAN a guest's will, a squatted client id, subscription churn or one huge publish got
past amqtt's guards (issue 26); Mosquitto holds all of them. With `lan` (or a `bind` beyond
loopback) and no `host`, the tower writes a config, a password file and an ACL into
`<store folder>/mosquitto/`, starts Mosquitto, starts it again if it dies and stops it with
the tower (mqtt/pidfile.py: a tower killed outright takes it along). Dying more than RESTARTS
times within RESTART_WINDOW_S seconds, it is given up, and the tower is told so that it can
exit and be started again. The tower itself connects on a listener of its own on loopback,
so a flood of guests on the LAN listeners cannot shut it out.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import logging
import os
import shutil
import socket
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

from tidetower.mqtt.broker import BrokerStartError, check_free
from tidetower.mqtt.lan import GM_USER, TOWER_USER, LanAccess, write_private
from tidetower.mqtt.pidfile import forget_pid, keep_pid, parent_death_signal, stop_leftover
from tidetower.mqtt.registry import COMMANDS
from tidetower.mqtt.settings import MqttSettings

log = logging.getLogger(__name__)

MAX_PACKET_BYTES = 1 << 20
"""Mosquitto cuts off a client whose packet is larger: no publish is buffered whole."""
MAX_CONNECTIONS = 200
"""Per LAN listener: a table's phones fit many times over, a flood does not."""
MAX_QUEUED = 200
"""Messages queued for one slow client before Mosquitto drops its QoS 1 backlog."""
RESTARTS = 5
"""How many deaths within RESTART_WINDOW_S Mosquitto is started again after; one more and
the tower gives up on it (a Mosquitto that dies now and then is restarted for ever)."""
RESTART_WINDOW_S = 60.0
"""The sliding window, in seconds, in which Mosquitto's deaths are counted."""
PBKDF2_ROUNDS = 1000
"""Mosquitto's `$7$` hash: cheap enough that a flood of wrong passwords cannot stall a Pi."""
_NOT_INSTALLED = "LAN play needs Mosquitto, which is not installed: sudo apt install mosquitto"


def mosquitto_binary() -> str:
    """Where Mosquitto is installed (Debian puts it in /usr/sbin), or a one-line refusal."""
    found = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        raise BrokerStartError(_NOT_INSTALLED)
    return found


def password_line(user: str, password: str) -> str:
    """One line of a Mosquitto password file: PBKDF2-SHA512, as `mosquitto_passwd` writes."""
    salt = os.urandom(12)
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, PBKDF2_ROUNDS, 64)
    encoded = [base64.b64encode(part).decode("ascii") for part in (salt, digest)]
    return f"{user}:$7${PBKDF2_ROUNDS}${encoded[0]}${encoded[1]}"


def acl_text(settings: MqttSettings) -> str:
    """Anyone reads the table; the GM also sends each command the tower knows, one topic
    each (never `cmd/result`, never the state); the tower reads and writes everything."""
    base = f"{settings.prefix}/{settings.table}"
    lines = ["# anonymous guests: the table, read only", f"topic read {base}/#"]
    lines += [f"user {TOWER_USER}", "topic readwrite #", f"user {GM_USER}", f"topic read {base}/#"]
    lines += [f"topic write {base}/cmd/{name}" for name in sorted(COMMANDS)]
    return "\n".join(lines)


def config_text(settings: MqttSettings, access: LanAccess, folder: Path) -> str:
    """mosquitto.conf: the tower's loopback listener, then the LAN's TCP and WebSockets."""
    host = settings.listen_host()
    return "\n".join(
        [
            "per_listener_settings false",
            "allow_anonymous true",
            f"password_file {folder / 'passwd'}",
            f"acl_file {folder / 'acl'}",
            # as root, Mosquitto would switch to a user who cannot read these files
            f"user {getpass.getuser()}",
            "persistence false",
            f"log_dest file {folder / 'mosquitto.log'}",
            f"max_packet_size {MAX_PACKET_BYTES}",
            f"max_queued_messages {MAX_QUEUED}",
            "set_tcp_nodelay true",
            f"listener {access.tower_port} 127.0.0.1",
            f"listener {settings.port} {host}",
            f"max_connections {MAX_CONNECTIONS}",
            f"listener {settings.ws_port} {host}",
            "protocol websockets",
            f"max_connections {MAX_CONNECTIONS}",
            "",
        ]
    )


def _listening(port: int) -> bool:
    """True once something accepts connections on loopback `port`."""
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


class SupervisedMosquitto:
    """A Mosquitto of the tower's own, started from the files it writes, restarted if it dies."""

    def __init__(
        self,
        settings: MqttSettings,
        access: LanAccess,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.access = access
        self.folder = access.folder / "mosquitto"
        self.restarts = 0
        """How many times Mosquitto died and was started again."""
        self.gave_up: str | None = None
        """Why Mosquitto was given up on (it died too often); None while it is kept running."""
        self.on_give_up: list[Callable[[str], None]] = []
        """Called on the watcher's thread with that reason when Mosquitto is given up on."""
        self._clock = clock
        self._deaths: deque[float] = deque()
        self._process: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._watcher: threading.Thread | None = None

    @property
    def pid(self) -> int | None:
        """The running Mosquitto's process id (None when stopped)."""
        return self._process.pid if self._process is not None else None

    @property
    def log_file(self) -> Path:
        """Mosquitto's own log: connections, refusals, its errors."""
        return self.folder / "mosquitto.log"

    @property
    def pidfile(self) -> Path:
        """Where the running Mosquitto's process id is kept, for the next start to check."""
        return self.folder / "mosquitto.pid"

    def start(self, timeout: float = 10.0) -> SupervisedMosquitto:
        """Write the files, start Mosquitto and return once every listener accepts."""
        binary = mosquitto_binary()
        stop_leftover(self.pidfile, self.folder / "mosquitto.conf")
        host = self.settings.listen_host()
        tower = ("127.0.0.1", self.access.tower_port)
        for bind, port in (tower, (host, self.settings.port), (host, self.settings.ws_port)):
            check_free(bind, port)
        self._write_files()
        self._launch(binary, timeout)
        self._watcher = threading.Thread(target=self._watch, name="mosquitto", daemon=True)
        self._watcher.start()
        return self

    def _write_files(self) -> None:
        """The config, the two users' hashes and the ACL, readable by their owner only."""
        users = [password_line(GM_USER, self.access.gm_token)]
        users.append(password_line(TOWER_USER, self.access.tower_secret))
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.folder.chmod(0o700)
            write_private(self.folder / "passwd", "\n".join(users))
            write_private(self.folder / "acl", acl_text(self.settings))
            write_private(
                self.folder / "mosquitto.conf", config_text(self.settings, self.access, self.folder)
            )
        except OSError as error:
            raise BrokerStartError(
                f"cannot write Mosquitto's files in {self.folder}: {error.strerror}"
            ) from None

    def _launch(self, binary: str, timeout: float) -> None:
        """Start the process; a Mosquitto that exits or never listens is a one-line refusal."""
        command = [binary, "-c", str(self.folder / "mosquitto.conf")]
        self._process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=parent_death_signal(),
        )
        keep_pid(self.pidfile, self._process.pid)
        ports = (self.access.tower_port, self.settings.port, self.settings.ws_port)
        deadline = time.monotonic() + timeout
        while not all(_listening(port) for port in ports):
            if self._process.poll() is not None or time.monotonic() > deadline:
                self._halt()
                raise BrokerStartError(f"Mosquitto did not start: {self._last_words()}")
            time.sleep(0.05)

    def _last_words(self) -> str:
        """Mosquitto's last error line: what it said on stderr, else its log's last line."""
        said = b""
        if (
            self._process is not None
            and self._process.stderr is not None
            and self._process.poll() is not None
        ):
            said = self._process.stderr.read()
        lines = said.decode(errors="replace").strip().splitlines()
        if not lines and self.log_file.is_file():
            lines = self.log_file.read_text(errors="replace").strip().splitlines()
        return lines[-1][:300] if lines else "it said nothing"

    def _watch(self) -> None:
        """Start Mosquitto again each time it dies (a start that fails is a death too), until
        it dies more than RESTARTS times within RESTART_WINDOW_S seconds."""
        while not self._stopping.is_set():
            process = self._process
            if process is None or process.wait() is None or self._stopping.is_set():
                return
            said = self._last_words()
            if not self._may_restart():
                self._give_up(f"{len(self._deaths)} times within {RESTART_WINDOW_S:g} s ({said})")
                return
            self.restarts += 1
            log.warning("Mosquitto exited (%s); starting it again", said)
            try:
                self._launch(mosquitto_binary(), 10.0)
            except BrokerStartError as error:
                log.error("%s", error)

    def _may_restart(self) -> bool:
        """Count a death now; True while no more than RESTARTS fall in the window."""
        now = self._clock()
        self._deaths.append(now)
        while self._deaths[0] <= now - RESTART_WINDOW_S:
            self._deaths.popleft()
        return len(self._deaths) <= RESTARTS

    def _give_up(self, how_often: str) -> None:
        """Stop restarting Mosquitto and tell the tower, whose LAN play has ended."""
        why = f"the tower's Mosquitto died {how_often}; LAN play has stopped"
        log.error("%s", why)
        self._process = None
        forget_pid(self.pidfile)
        for tell in list(self.on_give_up):
            tell(why)
        self.gave_up = why  # last: once it is set, the tower has been told and nothing is left

    def _halt(self) -> None:
        """Stop the process: asked first, killed if it will not go."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def stop(self) -> None:
        """Stop Mosquitto for good (no restart) and wait for it."""
        self._stopping.set()
        self._halt()
        if self._watcher is not None:
            self._watcher.join(10)
        self._process = None
        forget_pid(self.pidfile)

    def __enter__(self) -> SupervisedMosquitto:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
