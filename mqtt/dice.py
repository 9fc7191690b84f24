"""The retained `dice`: the table's own dice, each with its name, kind, pips or numerals,
colour and how far it is taught, kept as the tower's dice folder is (firmware/table_dice.py
reads it).

The publisher polls the folder's cheap state (file names, times and sizes) at each step, so a
die taught, renamed, forgotten or learning in play is on the page within a step.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Literal, Protocol

from pydantic import BaseModel, Field

from tidetower.mqtt.client import BrokerClient
from tidetower.mqtt.payloads import DieName, Published

if TYPE_CHECKING:
    from tidetower.mqtt.publisher import TablePublisher

MAX_DICE = 64
"""More dice than any table plays with (vision/dice/table.py refuses a folder of more)."""


class TableDieBody(BaseModel):
    """One of the table's dice, as the page lists it."""

    name: str = Field(description="the name the table gave it ('white omen')")
    kind: DieName
    printed: Literal["pips", "numerals"]
    colour: str = Field(description="its plastic's colour, CSS hex (#rrggbb)")
    photos: int = Field(ge=0, description="the photos its reader is taught from, every face")
    short: list[str] = Field(
        [], description="its faces with fewer photos than `enough`, as the die shows them"
    )


class DicePayload(Published):
    """Retained `dice`: the table's own dice, by file name, and the files refused."""

    dice: list[TableDieBody] = Field([], max_length=MAX_DICE)
    enough: int = Field(description="photos a face needs before its die reads as well as it will")
    problems: list[str] = Field(
        [], max_length=MAX_DICE + 1, description="each die file not read, and why: one line each"
    )


class DiceSource(Protocol):
    """The table's dice as the publisher follows them (firmware's `DiceFolder`)."""

    def state(self) -> Hashable:
        """What changes whenever a die does, cheap enough to ask at every step."""
        ...

    def payload(self) -> DicePayload:
        """The retained `dice` as the dice are now."""
        ...


class DiceFeed:
    """Keeps the retained `dice` as the source is: sent after each connect and whenever the
    source's state changes (a send that fails is tried again at the next step)."""

    def __init__(
        self,
        client: BrokerClient,
        topic: str,
        source: DiceSource,
        report: Callable[[str, BaseException | None], None],
    ) -> None:
        self._client, self._topic, self._source, self._report = client, topic, source, report
        self._sent: Hashable = None  # the state last sent; None: nothing sent yet

    def tick(self, fresh: bool) -> None:
        """Send the dice if they changed since last sent, or if the connection is new."""
        try:
            state = self._source.state()  # before the payload: a change in between goes next
            if fresh or self._sent is None or state != self._sent:
                text = self._source.payload().model_dump_json()
                if self._client.publish(self._topic, text, 1, True):
                    self._sent = state
        except Exception as error:  # a bug in the source: say so, and keep publishing the rest
            self._report(
                f"{self._topic} cannot be published ({type(error).__name__}: {error})", error
            )


def follow_dice(publisher: TablePublisher, source: DiceSource) -> DiceFeed:
    """Publish the table's dice (retained `dice`) on each connect and whenever they change."""
    feed = DiceFeed(
        publisher.client, publisher.topics.dice, source, publisher.table.problems.report
    )
    publisher.ticks.append(feed.tick)
    return feed
