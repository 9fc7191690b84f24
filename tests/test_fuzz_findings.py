"""What the fuzz suite (tests/test_fuzz_commands.py) found, each held by a focused test:
a body nested past the parser's depth still gets its id back, and `cmd/die` takes every face
the camera reads (a units d10's 0, a tens d10's 00..90) while `cmd/roll` names a lone tens
die as the kind at fault. (A tower stopped while it learns: tests/test_corrections.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from fuzz_strategies import deep_raw

from tidetower.engine.table import Table
from tidetower.mqtt.bodies import Refused, checked
from tidetower.mqtt.command_bodies import DieCommand, RollCommand
from tidetower.mqtt.commands import CommandDesk
from tidetower.vision.kinds import KINDS, face_values


@pytest.mark.parametrize(
    ("depth", "value"),
    [
        (300, deep_raw(300)),
        (301, deep_raw(301)),
        (1000, deep_raw(1000)),
        (2000, b"[" * 2000 + b"]" * 2000),  # as deep as 4,096 bytes go
    ],
)
def test_a_body_nested_past_the_parser_still_gets_its_id_back(
    tmp_path: Path, depth: int, value: bytes
) -> None:
    with Table(tmp_path / "s.db") as table:
        desk = CommandDesk(table)
        before = table.state
        for raw in (
            b'{"id": "d1", "params": ' + value + b"}",
            b'{"params":' + value + b',"id":"d1"}',
        ):
            reply = desk.handle("declare", raw)
            assert (reply.id, reply.ok) == ("d1", False)
            assert reply.error is not None and reply.error.field == "params"
            assert f"params nests {depth} deep" in reply.error.message
        unusable = desk.handle("declare", b'{"id": "\\ud800", "p": ' + value + b"}")
        assert unusable.id is None and not unusable.ok
        assert table.state == before


def test_cmd_die_takes_every_face_the_camera_reads_and_no_other() -> None:
    for kind in KINDS:
        for value in face_values(kind):  # the faces the page offers for the kind
            assert checked(DieCommand, {"id": "f", "index": 0, "kind": kind, "value": value})
        with pytest.raises(Refused) as refused:
            checked(DieCommand, {"id": "f", "index": 0, "kind": kind, "value": 101})
        assert refused.value.field == "value" and f"a {kind} cannot show 101" in str(refused.value)
    typed = checked(DieCommand, {"id": "f", "index": 0, "kind": "d10", "value": 10})
    assert typed.value == 10  # a units d10's 0, typed as it is printed on some dice
    with pytest.raises(Refused, match=r"faces are 0\.\.90 by tens") as refused:
        checked(DieCommand, {"id": "f", "index": 0, "kind": "d10-tens", "value": 35})
    assert refused.value.field == "value"


def test_cmd_roll_names_a_lone_tens_die_as_the_kind_at_fault() -> None:
    with pytest.raises(
        Refused, match="no die of the rules: with a units d10 it makes a d100"
    ) as refused:
        checked(RollCommand, {"id": "r", "dice": [{"kind": "d10-tens", "value": 30}]})
    assert refused.value.field == "dice.0.kind"
    assert "invalid literal" not in refused.value.message
    roll = checked(RollCommand, {"id": "r", "dice": [{"kind": "d100", "value": 100}]})
    assert roll.dice[0].value == 100


def test_a_tens_d10_declared_as_the_tier_is_refused_naming_the_tier(tmp_path: Path) -> None:
    """It was refused only when the engine read the declaration back, in a multi-line
    pydantic error naming no field."""
    with Table(tmp_path / "s.db") as table:
        reply = CommandDesk(table).handle("declare", b'{"id": "t", "tier": "d10-tens"}')
    assert reply.error is not None and reply.error.field == "tier"
    assert "\n" not in reply.error.message and "makes a d100" in reply.error.message
