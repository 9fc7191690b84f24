"""amqtt refuses a client whose last will would land on a command topic.

A will is published by the broker itself when its client drops, past every publish check
(issue 26): on the loopback broker too, no will may ever become a command.
"""

from __future__ import annotations

from dataclasses import dataclass

from amqtt.plugins.base import BaseAuthPlugin  # type: ignore[import-untyped]  # no types
from amqtt.session import Session  # type: ignore[import-untyped]


def is_command_topic(topic: str | None) -> bool:
    """True for `<prefix>/<table>/cmd/<anything>`: where the tower takes its commands."""
    levels = (topic or "").split("/")
    return len(levels) >= 4 and levels[2] == "cmd"


class NoCommandWills(BaseAuthPlugin):  # type: ignore[misc]  # amqtt's base is untyped
    """Refuses the connection of a client that leaves a will on a command topic."""

    async def authenticate(self, *, session: Session) -> bool | None:
        """False for a command will; None (no say) for everyone else."""
        if session.will_flag and is_command_topic(session.will_topic):
            self.context.logger.warning(
                "refused %s: a will on %s", session.client_id, session.will_topic
            )
            return False
        return None

    @dataclass
    class Config:
        """No settings: the rule is the same for every table."""
