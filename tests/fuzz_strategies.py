"""Hypothesis strategies for GM commands (issue 17's fuzz suite): bodies derived from each
command's pydantic schema, so a new command is fuzzed as soon as it is in the registry; the
table's own practice turns, so deep states are reached; and hostile mutations of both (wrong
types, deep nesting, lone surrogates, huge numbers, NaN, broken bytes, the retain flag)."""

from __future__ import annotations

import json
import random
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Union, get_args, get_origin

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from tidetower.engine.codec import dump
from tidetower.engine.session import SessionState
from tidetower.engine.systems import get_system, system_names
from tidetower.mqtt.registry import COMMANDS

Body = dict[str, Any]
DEPTHS = (7, 8, 9, 10, 64, 300, 301, 600, 1000, 1500, 2000)
"""How deep a hostile value nests: around the bound, and past what a parser can take."""
VALUE_DEPTHS = tuple(d for d in DEPTHS if d <= 600)
"""Those json.dumps can still write (as bytes, `deep_raw` nests deeper)."""
HUGE = (
    10**6,
    10**6 + 1,
    -(10**6) - 1,
    2**31,
    2**63,
    -(2**63) - 1,
    10**400,
    10**3999,
    1e308,
    -1e-320,
    -0.0,
    float("inf"),
    float("-inf"),
    float("nan"),
)
"""Numbers at and past every bound; each still fits the 4,300 digits Python writes."""


@dataclass(frozen=True)
class Sent:
    """One message to the tower: the command name of its topic, its raw body, its flag."""

    name: str
    raw: bytes
    retain: bool = False
    kind: str = "schema"
    """Where it came from: schema, practice, hostile or junk (for the bench's figures)."""


def vocabulary(state: SessionState | None = None) -> tuple[str, ...]:
    """Words a fuzzed text is often drawn from, so it sometimes means something: every
    command field, every system's settings and declaration fields, the systems, the roll ids."""
    fields = {name for spec in COMMANDS.values() for name in spec.model.model_fields}
    for system in system_names():
        described = get_system(system).describe()
        fields |= {f.name for f in (*described.settings, *described.fields)}
    ids = [r.id for r in state.history[-5:]] if state is not None else []
    return (*sorted(fields), *system_names(), *ids, "a", "b", "")


PRINTABLE = st.characters(exclude_categories=["Cc", "Cs"])
"""What a table's text is made of (`hostile_texts` brings the rest)."""


def hostile_texts() -> SearchStrategy[str]:
    """Texts that are not text (lone surrogates, controls), odd ones, and long ones."""
    odd = st.characters(categories=["Cs", "Cc", "Cf", "Co", "Zl", "Zs", "Mn"])
    return st.one_of(
        st.text(odd, min_size=1, max_size=4),
        st.sampled_from(["\ud800", "a\udfffb", "\x00", "bell\x07", "\u202eevil", "\ufeff"]),
        st.sampled_from([40, 41, 64, 65, 80, 81, 200, 201, 1000]).map(lambda n: "x" * n),
    )


def texts(vocab: Sequence[str]) -> SearchStrategy[str]:
    """Any text, mostly printable, often a word the table knows."""
    return st.one_of(st.text(PRINTABLE, max_size=12), st.sampled_from(vocab), hostile_texts())


def numbers() -> SearchStrategy[int | float]:
    """Small whole numbers (faces, weights), any number, and every bound's edge."""
    return st.one_of(st.integers(-3, 120), st.integers(), st.sampled_from(HUGE), st.floats())


def nested(depth: int, leaf: object = 1) -> object:
    """`leaf` inside `depth` levels of lists and objects, alternately."""
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"a": value}
    return value


def json_values(vocab: Sequence[str]) -> SearchStrategy[object]:
    """JSON values for params and settings: leaves of every kind, nested a little or a lot."""
    leaves = st.one_of(st.none(), st.booleans(), numbers(), texts(vocab))
    shallow = st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(texts(vocab), inner, max_size=4)
        ),
        max_leaves=10,
    )
    deep = st.builds(nested, st.sampled_from(VALUE_DEPTHS), leaves)
    return st.one_of(shallow, shallow, deep)


def values_of(annotation: Any, meta: Sequence[Any], vocab: Sequence[str]) -> SearchStrategy[Any]:
    """Values of a field's type within its schema's bounds (`meta`: pydantic's Ge, MaxLen...)."""
    origin, args = get_origin(annotation), get_args(annotation)
    bounds = {k: getattr(m, k) for m in meta for k in BOUNDS if hasattr(m, k)}
    if annotation is Any:
        return json_values(vocab)
    if origin in (Union, types.UnionType):
        return st.one_of([values_of(arg, meta, vocab) for arg in args])
    if origin is Literal:
        return st.sampled_from(args)
    if origin is list:
        low, high = bounds.get("min_length", 0), min(bounds.get("max_length", 6), 6)
        return st.lists(values_of(args[0], [], vocab), min_size=low, max_size=high)
    if origin is dict:
        return st.dictionaries(texts(vocab), values_of(args[1], [], vocab), max_size=5)
    return _scalars(annotation, bounds, vocab)


BOUNDS = ("ge", "le", "min_length", "max_length")
"""The bounds of pydantic's Field the strategies keep to (annotated_types' names)."""


def _scalars(annotation: Any, bounds: dict[str, Any], vocab: Sequence[str]) -> SearchStrategy[Any]:
    """A model, or a scalar field's values within its bounds."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return schema_body(annotation, vocab)
    if annotation is type(None):
        return st.none()
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        low, high = bounds.get("ge"), bounds.get("le")
        if low is None and high is None:  # faces, thresholds: mostly small, any at all too
            return st.one_of(st.integers(0, 12), st.integers(-3, 120), st.integers())
        return st.integers(low, high)
    if annotation is str:
        low, high = bounds.get("min_length", 0), bounds.get("max_length")
        fitting = [w for w in vocab if low <= len(w) <= (high or len(w))]
        return st.one_of(st.text(PRINTABLE, min_size=low, max_size=high), st.sampled_from(fitting))
    args = get_args(annotation)  # Annotated[int, Strict()]: the type it annotates
    if args:
        return _scalars(args[0], bounds, vocab)
    raise TypeError(f"no strategy for a command field of type {annotation!r}")


def field_values(field: FieldInfo, vocab: Sequence[str]) -> SearchStrategy[Any]:
    """A command field's values, as its schema says."""
    return values_of(field.annotation, field.metadata, vocab)


def schema_body(model: type[BaseModel], vocab: Sequence[str]) -> SearchStrategy[Body]:
    """A body of `model` as JSON carries it: its required fields, any of its optional ones."""
    fields = model.model_fields
    return st.fixed_dictionaries(
        {n: field_values(f, vocab) for n, f in fields.items() if f.is_required()},
        optional={n: field_values(f, vocab) for n, f in fields.items() if not f.is_required()},
    )


def schema_commands(vocab: Sequence[str]) -> SearchStrategy[tuple[str, Body]]:
    """(name, body) of any command in COMMANDS, drawn from its schema."""
    return st.sampled_from(sorted(COMMANDS)).flatmap(
        lambda name: schema_body(COMMANDS[name].model, vocab).map(lambda body: (name, body))
    )


@dataclass(frozen=True)
class Scene:
    """The table a message is drawn for; its repr short, as Hypothesis prints strategies."""

    state: SessionState = field(repr=False)


@st.composite
def practice_commands(draw: st.DrawFn, scene: Scene) -> tuple[str, Body]:
    """(name, body) of what the table's own practice turn does next (a fresh tracker, a
    declaration, a throw of the dice it names): commands the table accepts, so the fuzz
    reaches deep states under every system."""
    state = scene.state
    rng = random.Random(draw(st.integers(0, 2**32)))
    turn = get_system(state.system).practice_turn(state.tracker, state.history, rng, {})
    request = f"p{draw(st.integers(0, 999))}"
    choices: list[tuple[str, Body]] = []
    if turn.reset is not None:
        settings = json.loads(json.dumps(turn.reset))
        choices.append(("system", {"id": request, "name": state.system, "settings": settings}))
    if turn.context is not None:
        choices.append(("declare", {"id": request, **dump(turn.context)}))
    kinds = turn.dice or ("d6",) * draw(st.integers(1, 5))
    dice = [{"kind": str(k), "value": draw(st.integers(1, int(str(k)[1:])))} for k in kinds]
    choices.append(("roll", {"id": request, "dice": dice}))
    return draw(st.sampled_from(choices))


def command_names() -> SearchStrategy[str]:
    """A command's topic name: a known one, or a word that names none (never `result`,
    the replies' own topic, nor a topic wildcard or level)."""
    unknown = st.text(st.characters(codec="ascii", categories=["L", "N", "Pd"]), min_size=1)
    return st.one_of(st.sampled_from(sorted(COMMANDS)), unknown.filter(lambda n: n != "result"))


def encode(value: object, ascii_only: bool = True) -> bytes:
    """JSON bytes of `value`; not ASCII-escaped, a lone surrogate becomes bytes that are not
    UTF-8 (as a careless client would send them)."""
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


def deep_raw(depth: int) -> bytes:
    """A value nested `depth` deep, as bytes (too deep for json.dumps to write)."""
    return (
        b'{"a":' * (depth // 2)
        + b"[" * (depth - depth // 2)
        + b"1"
        + b"]" * (depth - depth // 2)
        + b"}" * (depth // 2)
    )


MUTATIONS = ("value", "value", "deep", "drop", "pad", "top", "dup", "bytes", "raw-utf8")
_HOLE = "__deep__"


@st.composite
def hostile_raw(draw: st.DrawFn, body: Body, vocab: Sequence[str]) -> bytes:
    """`body` with one hostile change: a field given any value (a wrong type, a surrogate, a
    huge number), nested past every bound, dropped, padded past the size limit, a body that
    is no object, a duplicated id, broken bytes."""
    how, key = draw(st.sampled_from(MUTATIONS)), draw(st.sampled_from([*body, *vocab]))
    if how == "top":
        return encode(draw(st.sampled_from([[body], "body", 1, None])))
    if how == "deep":
        hole = encode({**body, key: _HOLE})
        return hole.replace(f'"{_HOLE}"'.encode(), deep_raw(draw(st.sampled_from(DEPTHS))))
    raw = encode(draw(_edited(body, how, key, vocab)), ascii_only=how != "raw-utf8")
    if how == "dup":
        return raw[:-1] + b', "id": ' + encode(draw(texts(vocab))) + b"}"
    if how == "bytes":
        at = draw(st.integers(0, len(raw)))
        return raw[:at] + draw(st.binary(max_size=4)) + raw[at + draw(st.integers(0, 3)) :]
    return raw


@st.composite
def _edited(draw: st.DrawFn, body: Body, how: str, key: str, vocab: Sequence[str]) -> Body:
    """`body` with `key` given any value, dropped, or padded past the size limit."""
    body = dict(body)
    if how == "value":
        body[key] = draw(st.one_of(json_values(vocab), hostile_texts()))
    elif how == "drop":
        body.pop(key, None)
    elif how == "pad":
        body[key] = "x" * draw(st.sampled_from([3900, 4100, 9000]))
    return body


def junk() -> SearchStrategy[Sent]:
    """Bodies that are no command at all: bytes, text, nesting past any parser."""
    raw = st.one_of(
        st.binary(min_size=1, max_size=64),
        st.text(min_size=1, max_size=32).map(lambda t: t.encode()),
        st.sampled_from(DEPTHS).map(deep_raw),
        st.sampled_from(DEPTHS).map(lambda d: b'{"id": "deep", "params": ' + deep_raw(d) + b"}"),
    )
    return st.builds(Sent, command_names(), raw, kind=st.just("junk"))


def _sent(kind: str, name: str, raw: bytes, retain: bool) -> Sent:
    return Sent(name, raw, retain=retain, kind=kind)


def messages(state: SessionState) -> SearchStrategy[Sent]:
    """One message to the tower in the state `state`: a command from its schema or the
    practice turn, as it is (about 5 in 12), mutated (5 in 12), or junk; 1 in 10 retained."""
    vocab = vocabulary(state)
    named = st.one_of(
        schema_commands(vocab).map(lambda c: ("schema", *c)),
        practice_commands(Scene(state)).map(lambda c: ("practice", *c)),
    )
    good = named.map(lambda c: (c[0], c[1], encode(c[2])))
    bad = named.flatmap(
        lambda c: st.tuples(
            st.just("hostile"), st.one_of(st.just(c[1]), command_names()), hostile_raw(c[2], vocab)
        )
    )
    retained = st.sampled_from([False] * 9 + [True])
    sent = st.builds(lambda c, r: _sent(*c, r), st.one_of(good, bad), retained)
    return st.sampled_from([sent] * 5 + [junk()]).flatmap(lambda chosen: chosen)
