"""An MQTT broker inside the tower (amqtt), for a laptop table or a first try.

TCP and WebSockets, on loopback only: every client is this machine's own (the LAN gets the
tower's own Mosquitto, mqtt/mosquitto.py). It runs its own asyncio loop on a thread so the
rest of the tower stays synchronous.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import logging
import socket
import threading
from typing import Any

from tidetower.mqtt.settings import MqttSettings

log = logging.getLogger(__name__)


SHUTDOWN_SECONDS = 3.0
"""How long amqtt may take to say goodbye to its clients before they are cut off."""


class BrokerStartError(RuntimeError):
    """The embedded broker could not start (port in use, bad bind address)."""

    def __init__(self, message: str, taken: str | None = None) -> None:
        super().__init__(message)
        self.taken = taken
        """The HOST:PORT another program listens on, when that is why."""


ANONYMOUS = {
    "amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True},
    "tidetower.mqtt.wills.NoCommandWills": {},
}
"""amqtt's plugins when nothing else is asked for: anyone may connect and do anything but
leave a will on a command topic."""


def broker_config(settings: MqttSettings, plugins: dict[str, Any] | None = None) -> dict[str, Any]:
    """amqtt's config: a TCP and a WebSockets listener, and `plugins` (default: anonymous
    clients allowed everything)."""
    host = settings.listen_host()
    return {
        "listeners": {
            "default": {"type": "tcp", "bind": f"{host}:{settings.port}"},
            "ws": {"type": "ws", "bind": f"{host}:{settings.ws_port}"},
        },
        "plugins": plugins if plugins is not None else ANONYMOUS,
    }


def check_free(bind: str, port: int) -> None:
    """Refuse early, naming the port, rather than leave one listener of two open."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((bind, port))
        except OSError as error:
            taken = error.errno == errno.EADDRINUSE
            hint = (
                " (another broker, such as Mosquitto, holds it: use that one with [mqtt] host"
                " or --broker HOST:PORT, or choose another [mqtt] port)"
                if taken
                else ""
            )
            raise BrokerStartError(
                f"the tower's broker cannot listen on {bind}:{port}: {error.strerror}{hint}",
                f"{bind}:{port}" if taken else None,
            ) from None


def _drain(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what amqtt left running and let it finish, then close the loop: no task is
    left to be finalized later, on another thread, after its loop is gone."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


class EmbeddedBroker:
    """amqtt's broker on its own thread and event loop; start() returns once it listens."""

    def __init__(self, settings: MqttSettings, plugins: dict[str, Any] | None = None) -> None:
        self.settings = settings
        self.plugins = plugins
        self._loop: asyncio.AbstractEventLoop | None = None
        self._broker: Any = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def start(self, timeout: float = 10.0) -> EmbeddedBroker:
        """Start listening on the configured TCP and WebSockets ports; returns self."""
        for port in (self.settings.port, self.settings.ws_port):
            check_free(self.settings.listen_host(), port)
        self._thread = threading.Thread(target=self._run, name="mqtt-broker", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise BrokerStartError(f"embedded broker did not start within {timeout} s")
        if self._error is not None:
            raise BrokerStartError(
                f"embedded broker on {self.settings.listen_host()}:"
                f"{self.settings.port}/{self.settings.ws_port} failed: "
                f"{self._error}"
            ) from self._error
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._start())
        except BaseException as error:  # reported to start() on the caller's thread
            self._error = error
            self._close_half_started(loop)
            self._ready.set()
            return
        self._ready.set()
        loop.run_forever()
        _drain(loop)

    def _close_half_started(self, loop: asyncio.AbstractEventLoop) -> None:
        """Close whichever listener did open before another failed, then the loop."""
        if self._broker is not None:
            try:
                loop.run_until_complete(self._broker.shutdown())
            except Exception:
                log.debug("embedded broker was not far enough along to shut down")
        loop.close()

    async def _start(self) -> None:
        from amqtt.broker import Broker  # type: ignore[import-untyped]  # amqtt ships no types

        self._broker = Broker(broker_config(self.settings, self.plugins))
        await self._broker.start()

    def stop(self) -> None:
        """Shut the broker down and wait for its thread."""
        loop, broker = self._loop, self._broker
        if loop is None or broker is None or not loop.is_running():
            return
        # The tower's last "offline" status races the shutdown, and the tasks amqtt leaves
        # are cancelled on purpose: its warnings and tracebacks about either are noise on the
        # user's terminal. Our own log says when the shutdown was not clean.
        amqtt_log = logging.getLogger("amqtt")
        level = amqtt_log.level
        amqtt_log.setLevel(logging.CRITICAL)
        try:
            self._shut_down(loop, broker)
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(10)
        finally:
            amqtt_log.setLevel(level)

    def _shut_down(self, loop: asyncio.AbstractEventLoop, broker: Any) -> None:
        done = asyncio.run_coroutine_threadsafe(broker.shutdown(), loop)
        try:
            done.result(SHUTDOWN_SECONDS)
        except concurrent.futures.TimeoutError:
            # amqtt 0.12 can wait for ever on a connected client's reader; what is left
            # is cancelled with the rest when the loop drains
            done.cancel()
            log.info("embedded broker: closing the clients that did not disconnect in time")
        except Exception:
            log.exception("embedded broker did not shut down cleanly")

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
