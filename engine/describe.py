"""What a rule system asks of the GM and shows the table, as data every surface renders.

A system's `Description` lists its settings (the set-up form), its declaration (the modes and
the fields each takes) and what its tracker looks like. The page builds its forms from it,
the CLIs parse `NAME=VALUE` by it, and the LED bar and the terminal draw the tracker's kind;
nothing outside the system's own package names its modes, fields or tracker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from tidetower.engine import params as p
from tidetower.engine.bounds import check_text
from tidetower.engine.rules import JSONValue, RuleError

FieldKind = Literal["whole", "text", "choice", "flag", "names", "side"]
TrackerKind = Literal["two-sided", "clocks", "count", "none"]
CONTEXT_FIELDS = ("actor", "side", "reply_to", "mode", "pool")
"""Declaration fields every system shares (RollContext's own); a system's other fields
travel in `RollContext.params`."""


@dataclass(frozen=True)
class Field:
    """One thing the GM fills in: a setting of the tracker, or a part of a declaration."""

    name: str
    label: str
    kind: FieldKind = "whole"
    choices: tuple[str, ...] = ()
    default: JSONValue = None
    minimum: int | None = None
    maximum: int | None = None
    help: str = ""


@dataclass(frozen=True)
class Mode:
    """One kind of roll or GM action a declaration names, with the fields it takes."""

    name: str
    fields: tuple[str, ...] = ()
    throws: bool = True
    """False for a GM action: it takes no dice, and the tower does not wait for a throw."""
    help: str = ""


@dataclass(frozen=True)
class Tracker:
    """What the tracker looks like: a bar between two sides, clocks, a count, or none."""

    kind: TrackerKind
    name: str
    """What the table calls it, e.g. "clocks", "the Count"."""
    end: str = "{side}"
    """The words at a side's end of a two-sided bar, e.g. "{side} momentum"."""
    position: str = "Position"
    """The word for where the marker stands, e.g. "Position 5 of 16"."""


@dataclass(frozen=True)
class Description:
    """A rule system's table: its settings, its declaration's modes and fields, its tracker."""

    title: str
    setup: str
    """The set-up action's name on a button, e.g. "Start the fight"."""
    tracker: Tracker
    settings: tuple[Field, ...] = ()
    fields: tuple[Field, ...] = ()
    """Every declaration field any mode takes (shared RollContext fields among them)."""
    modes: tuple[Mode, ...] = ()
    default_mode: str = ""
    toggle: str | None = None
    """The flag field a tower's third button flips, if the system has one."""
    story: str | None = None
    """The worked example its practice tells with option `story` (`tidetower demo`)."""

    def field(self, name: str) -> Field:
        """The declaration field called `name`, or a RuleError listing them."""
        found = next((f for f in self.fields if f.name == name), None)
        if found is None:
            known = ", ".join(f.name for f in self.fields) or "none"
            raise RuleError(f"unknown field {name!r}: known are {known}", field=name)
        return found

    def setting(self, name: str) -> Field:
        """The setting called `name`, or a RuleError listing them."""
        found = next((f for f in self.settings if f.name == name), None)
        if found is None:
            known = ", ".join(f.name for f in self.settings) or "none"
            raise RuleError(f"unknown setting {name!r}: known are {known}", field=name)
        return found


def read_fields(
    fields: tuple[Field, ...], values: Mapping[str, JSONValue], what: str
) -> dict[str, JSONValue]:
    """`values` checked against `fields` (kind, bounds, choices), each absent one at its
    default; an unknown key or a bad value is a RuleError naming it."""
    p.check_keys(values, [f.name for f in fields], what)
    return {f.name: _READERS[f.kind](f, values) for f in fields}


def _whole(f: Field, values: Mapping[str, JSONValue]) -> JSONValue:
    if values.get(f.name, f.default) is None:
        return None
    return p.whole(values, f.name, f.default, minimum=f.minimum, maximum=f.maximum)  # type: ignore[arg-type]


def _text(f: Field, values: Mapping[str, JSONValue]) -> JSONValue:
    value = values.get(f.name, f.default)
    if value is None:
        return None
    if not isinstance(value, str):
        raise RuleError(f"{f.name} must be text, got {value!r}", field=f.name)
    return check_text(value, f.name, f.maximum or MAX_TEXT)


def _choice(f: Field, values: Mapping[str, JSONValue]) -> JSONValue:
    allowed = f.choices if f.default is not None else (*f.choices, None)
    return p.choice(values, f.name, allowed, f.default)


_READERS: Mapping[FieldKind, Callable[[Field, Mapping[str, JSONValue]], JSONValue]] = {
    "whole": _whole,
    "text": _text,
    "choice": _choice,
    "flag": lambda f, values: p.flag(values, f.name),
    "names": lambda f, values: list(p.names(values, f.name)),
    "side": lambda f, values: p.choice(values, f.name, ("a", "b", None), None),
}
MAX_TEXT = 80
"""The longest text field a description takes when it names no maximum."""


def plain(name: str) -> Description:
    """A system that describes nothing: any mode, no settings, a two-sided bar."""
    return Description(name, f"Set up {name}", Tracker("two-sided", "the bar"))


def parse_value(field: Field, text: str) -> JSONValue:
    """A value typed at a terminal (`NAME=VALUE`) as the field's kind takes it."""
    if field.kind == "whole":
        try:
            return int(text)
        except ValueError:
            message = f"{field.name} must be a whole number, got {text!r}"
            raise RuleError(message, field=field.name) from None
    if field.kind == "flag":
        if text.lower() not in FLAG_WORDS:
            message = f"{field.name} must be true or false, got {text!r}"
            raise RuleError(message, field=field.name)
        return FLAG_WORDS[text.lower()]
    if field.kind == "names":
        return [name for name in text.split(",") if name]
    return text


FLAG_WORDS: Mapping[str, bool] = {
    "true": True, "yes": True, "on": True, "1": True,
    "false": False, "no": False, "off": False, "0": False,
}  # fmt: skip
