"""Topic names under `<prefix>/<table>/`, in one place so nodes and the tower agree."""

from __future__ import annotations

from dataclasses import dataclass

from tidetower.mqtt.settings import MqttSettings


@dataclass(frozen=True)
class Topics:
    """Every topic of one table."""

    base: str

    @classmethod
    def of(cls, settings: MqttSettings) -> Topics:
        """The topics of the table named in `settings`."""
        return cls(f"{settings.prefix}/{settings.table}")

    @property
    def status(self) -> str:
        return f"{self.base}/status"

    @property
    def tide(self) -> str:
        return f"{self.base}/tide"

    @property
    def session(self) -> str:
        return f"{self.base}/session"

    @property
    def stats(self) -> str:
        return f"{self.base}/stats"

    @property
    def tower(self) -> str:
        return f"{self.base}/tower"

    @property
    def dice(self) -> str:
        return f"{self.base}/dice"

    @property
    def teach(self) -> str:
        return f"{self.base}/teach"

    @property
    def learn(self) -> str:
        return f"{self.base}/learn"

    @property
    def roll(self) -> str:
        return f"{self.base}/roll"

    @property
    def commands(self) -> str:
        """Filter for every command topic."""
        return f"{self.base}/cmd/+"

    @property
    def command_result(self) -> str:
        return f"{self.base}/cmd/result"

    def command(self, name: str) -> str:
        """The topic a command called `name` is sent to."""
        return f"{self.base}/cmd/{name}"

    def command_name(self, topic: str) -> str | None:
        """The command name of a `cmd/<name>` topic, or None if it is not one."""
        head = f"{self.base}/cmd/"
        return topic[len(head) :] if topic.startswith(head) else None
