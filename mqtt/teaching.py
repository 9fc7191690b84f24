"""The guided teach flow on the broker: its progress retained on `teach`, faces from the page.

`tidetower teach --config` runs with the tower stopped (it holds the camera), so this link
starts the embedded broker when the config has one, as the tower would, and answers
`cmd/teach` itself on `cmd/result`.
"""

from __future__ import annotations

import logging
import queue
import threading
from pathlib import Path

from tidetower.mqtt.bodies import Refused, checked, parse_body, request_id
from tidetower.mqtt.client import BrokerClient, Message, Will
from tidetower.mqtt.command_bodies import TeachCommand
from tidetower.mqtt.lan import lan_access, tower_login
from tidetower.mqtt.payloads import CommandError, CommandResult, TeachPayload
from tidetower.mqtt.runtime import TowerBroker, start_broker
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics

log = logging.getLogger(__name__)


class TeachLink:
    """Shows the teach flow's progress to the displays and takes the faces they confirm."""

    def __init__(self, settings: MqttSettings, secrets: Path | None = None) -> None:
        self.settings = settings
        self.topics = Topics.of(settings)
        self._access = lan_access(settings, secrets)
        """A LAN broker's secrets, kept in `secrets` (the session store's folder)."""
        self.answers: queue.Queue[str] = queue.Queue()
        """The one answer to each throw, as text: tapped on a display or `typed`."""
        # a flow that dies, or loses the broker, leaves no panel up: the will empties `teach`
        login = tower_login(settings, self._access)
        self._client = BrokerClient(
            login,
            f"{login.client_id}-teach" if login.client_id else f"tidetower-teach-{settings.table}",
            will=Will(self.topics.teach, ""),
        )
        self._client.on_connect.append(self._republish)
        self._broker: TowerBroker | None = None
        self._lock = threading.Lock()  # the shown state and whether its throw is answered
        self._sending = threading.Lock()  # a reconnect's re-publish never overtakes a show()
        self._shown: TeachPayload | None = None
        self._open = False  # a throw awaits its one answer from a display

    def start(self, timeout: float = 5.0) -> TeachLink:
        """Start the embedded broker (if configured) and connect; a broker that is not
        there yet is retried in the background."""
        self._broker = start_broker(self.settings, self._access)
        try:
            self._client.subscribe(self.topics.command("teach"), self._on_command, 1)
            self._client.start()
            if self._client.wait_connected(timeout):
                self._client.wait_subscribed(timeout)  # a display's first answer is heard
        except BaseException:  # Ctrl-C while connecting: no broker left behind
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Empty the retained `teach` (the displays hide the flow), disconnect, stop the broker."""
        self._client.stop(last_words=(self.topics.teach, ""))
        if self._broker is not None:
            self._broker.stop()

    def __enter__(self) -> TeachLink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def show(self, state: TeachPayload, answerable: bool = True) -> None:
        """Publish the flow's progress, retained (again on every reconnect); a `confirm`
        step takes one answer from a display unless not `answerable` (a simulated player
        answers)."""
        with self._lock:
            self._shown = state
            self._open = answerable and state.step == "confirm"
            if self._open:  # an answer typed or tapped before this throw is not about it
                while not self.answers.empty():
                    self.answers.get_nowait()
        self._republish()

    def typed(self, text: str) -> None:
        """Take a line typed at the terminal: the throw's answer, if none came first."""
        with self._lock:
            self._open = False
            self.answers.put(text)

    def _republish(self) -> None:
        with self._sending:
            with self._lock:
                shown = self._shown
            if shown is not None:
                self._client.publish(self.topics.teach, shown.model_dump_json(), 1, True)

    def _on_command(self, message: Message) -> None:
        data: object = None
        try:
            data = parse_body(message.payload, self.settings.max_command_bytes)
            value = checked(TeachCommand, data).value
            self._accept(value)
        except Refused as refused:
            error = CommandError(field=refused.field, message=refused.message)
            reply = CommandResult(id=request_id(data), command="teach", ok=False, error=error)
        else:
            reply = CommandResult(
                id=request_id(data), command="teach", ok=True, detail={"face": value}
            )
        self._client.publish(self.topics.command_result, reply.model_dump_json(), 1)

    def _accept(self, value: int | None) -> None:
        """Queue the one answer to the throw awaiting it (None: throw again), or Refused."""
        with self._lock:
            shown = self._shown
            if shown is None or not self._open:
                raise Refused(
                    "value",
                    "no throw is waiting for an answer from a display: "
                    "throw the die (or it was answered already)",
                )
            left = [f for f in shown.faces if f not in shown.taught]
            if value is not None and value not in left:
                raise Refused(
                    "value",
                    f"{value} is not a face of the {shown.die} still to "
                    f"teach ({' '.join(map(str, left))})",
                )
            self._open = False
            self.answers.put("again" if value is None else str(value))
