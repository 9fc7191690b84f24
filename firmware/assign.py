"""`NAME=VALUE` at a terminal, read by the active rule system's description (its settings, its
declaration's fields), and the help that lists them, for `tidetower session` and `odds`."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from tidetower.engine.describe import CONTEXT_FIELDS, FLAG_WORDS, Description, Field, parse_value
from tidetower.engine.rules import RuleError
from tidetower.engine.store import SessionStore, StoreError
from tidetower.engine.systems import DEFAULT_SYSTEM, get_system


def default_store() -> Path:
    """Where the session lives when no --store is given (XDG data directory)."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "tidetower" / "session.db"


store_option = click.option(
    "--store",
    type=click.Path(dir_okay=False, path_type=Path),
    default=default_store,
    envvar="TIDETOWER_STORE",
    help=f"The session store (SQLite): $TIDETOWER_STORE if set, else {default_store()}.",
)
"""`--store`, here beside `default_store` so that the read-only `stats` commands need not
import the session commands (and the MQTT wire under them): some 0.3 s of a fresh start."""


def describe(system: str) -> Description:
    """The named system's description; an unknown name is a usage error naming it."""
    try:
        return get_system(system).describe()
    except RuleError as error:
        raise click.UsageError(str(error)) from None


def pairs(args: Sequence[str]) -> list[tuple[str, str]]:
    """`NAME=VALUE` arguments as (name, text) pairs; anything else is a usage error."""
    found = []
    for arg in args:
        name, sep, text = arg.partition("=")
        if not sep or not name:
            raise click.UsageError(f"{arg!r}: write each as NAME=VALUE, e.g. size=battle")
        found.append((name, text))
    return found


def loose(name: str, text: str) -> Field:
    """A field for a value the description does not describe: a whole number, a flag or
    text, as it reads (a shared field's text as text); the system checks it."""
    if name in CONTEXT_FIELDS and name != "pool":
        return Field(name, name, "text")
    if text.lstrip("-").isdigit():
        return Field(name, name)
    return Field(name, name, "flag" if text.lower() in FLAG_WORDS else "text")


def setting_field(description: Description, name: str, text: str) -> Field:
    """The setting `name` (an unknown one refused, the known listed); any, read as it reads,
    of a system that describes no settings."""
    return description.setting(name) if description.settings else loose(name, text)


def declared_field(description: Description, name: str, text: str) -> Field:
    """The declaration's field `name` (an unknown one refused, the known listed); a shared
    one it does not list, or any of a system that describes no fields, read as it reads."""
    if name in CONTEXT_FIELDS and all(f.name != name for f in description.fields):
        return loose(name, text)
    return description.field(name) if description.fields else loose(name, text)


Finder = Callable[[Description, str, str], Field]


def read_values(description: Description, args: Sequence[str], find: Finder) -> dict[str, Any]:
    """Each `NAME=VALUE` argument's value, read by the field `find` gives; a bad name or
    value is a usage error naming it."""
    values: dict[str, Any] = {}
    for name, text in pairs(args):
        try:
            values[name] = parse_value(find(description, name, text), text)
        except RuleError as error:
            raise click.UsageError(str(error)) from None
    return values


def read_settings(description: Description, args: Sequence[str]) -> dict[str, Any]:
    """The set-up's settings from `NAME=VALUE` arguments, by the description's settings."""
    return read_values(description, args, setting_field)


def read_declared(description: Description, args: Sequence[str]) -> dict[str, Any]:
    """A declare's body from `NAME=VALUE` arguments: the shared fields (actor, side, ...) as
    they are, the system's own in `params`, each read by the description's fields."""
    values = read_values(description, args, declared_field)
    shared = {k: v for k, v in values.items() if k in CONTEXT_FIELDS}
    return {**shared, "params": {k: v for k, v in values.items() if k not in CONTEXT_FIELDS}}


def field_line(field: Field) -> str:
    """What a field takes, in a few words: its kind, choices, bounds and default."""
    kind = " | ".join(field.choices) if field.choices else field.kind
    bounds = [f"≥ {field.minimum}"] if field.minimum is not None else []
    bounds += [f"≤ {field.maximum}"] if field.maximum is not None else []
    default = [f"default {field.default}"] if field.default not in (None, False) else []
    extra = ", ".join(bounds + default)
    said = f"{field.label}: {kind}" + (f" ({extra})" if extra else "")
    return said + (f"; {field.help}" if field.help else "")


def help_rows(description: Description, command: str) -> list[tuple[str, str]]:
    """The rows a command's help lists: the settings for `setup`, else the modes and the
    declaration's own fields (and, for `odds roll`, the settings as `--set`)."""
    settings = [(f.name, field_line(f)) for f in description.settings]
    if command == "setup":
        return settings
    modes = [("--mode", ", ".join(m.name for m in description.modes))] if description.modes else []
    own = [(f.name, field_line(f)) for f in description.fields if f.name not in CONTEXT_FIELDS]
    return (
        modes + own + ([(f"--set {n}", line) for n, line in settings] if command == "roll" else [])
    )


def active_system(store: Path | None) -> str:
    """The system the session in `store` plays (else $TIDETOWER_STORE's, else the default
    store's); DEFAULT_SYSTEM where there is none to read."""
    path = store or Path(os.environ.get("TIDETOWER_STORE") or default_store())
    if not path.exists():
        return DEFAULT_SYSTEM
    try:
        with SessionStore(path, read_only=True) as reader:
            state = reader.load()
    except StoreError:
        return DEFAULT_SYSTEM
    return DEFAULT_SYSTEM if state is None else state.system


def option_in(args: Sequence[str], option: str) -> str | None:
    """The value of `option` among raw command-line arguments, if it is given."""
    for index, arg in enumerate(args):
        if arg.startswith(f"{option}="):
            return arg.partition("=")[2]
        if arg == option and index + 1 < len(args):
            return args[index + 1]
    return None


class SystemHelp(click.Command):
    """A command whose help ends with what the active system (`--system`, else the session's
    in `--store`) takes as NAME=VALUE."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        store = option_in(args, "--store")
        ctx.meta["system"] = option_in(args, "--system") or active_system(
            None if store is None else Path(store)
        )
        return super().parse_args(ctx, args)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        system = ctx.meta.get("system") or active_system(None)
        rows = help_rows(describe(system), self.name or "")
        with formatter.section(f"NAME=VALUE of {system}"):
            formatter.write_dl(rows or [("(none described)", "given to the system as typed")])
