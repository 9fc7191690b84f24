"""Each rule system's table on the page, in real headless Chromium over Mosquitto: the GM's
forms built from the system's description (its modes, each mode's own fields, its settings)
and its tracker drawn by its kind: d6-pool's clocks, battle-rhythm's count, the test system
high-die's own bar; and the page's files name no system's fields."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mqtt_fixtures import Mosquitto, free_port
from playwright.sync_api import Page, expect

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import JSONValue, RollContext
from tidetower.engine.systems import get_system, system_names, unregister
from tidetower.engine.table import Table
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.publisher import TablePublisher

PAGE = Path(__file__).resolve().parent.parent / "mqtt" / "display"


@pytest.fixture(scope="module")
def high_die() -> Iterator[str]:
    """The test system in tests/systems/high_die, registered by importing its folder."""
    assert "high-die" not in system_names()
    importlib.import_module("systems.high_die")
    yield "high-die"
    unregister("high-die")
    sys.modules.pop("systems.high_die", None)


def _declare(page: Page, mode: str, *, applied: bool = False, **fields: str | bool) -> None:
    """The GM picks a mode, fills its fields as a person would and taps Declare (or, for a
    GM action that throws no dice, Apply: the page records it at once)."""
    form = page.locator("#form-declare")
    form.locator("[name=mode]").select_option(mode)
    for name, value in fields.items():
        field = form.locator(f"[name={name}]")
        if isinstance(value, bool):
            field.set_checked(value)
        elif field.evaluate("f => f.tagName") == "SELECT":
            field.select_option(label=value)
        else:
            field.fill(value)
    form.get_by_role("button", name=f"Apply {mode}" if applied else "Declare").click()
    expect(page.locator("#cmd-status")).to_have_text("roll: done" if applied else "declare: done")


def test_a_d6_pool_table_is_declared_from_the_page_and_shows_its_clocks(
    mosquitto: Mosquitto, tmp_path: Path, page: Page
) -> None:
    settings = mosquitto.settings()
    table = Table(tmp_path / "s.db", system="d6-pool")
    with (
        TablePublisher(table, settings) as publisher,
        DisplayServer(settings, port=free_port()) as server,
    ):
        page.goto(server.url)
        expect(page.locator("#segments")).to_have_text("No clocks yet")
        expect(page.locator("#tracker-bar")).to_be_hidden()  # no "Position 0 of 1"
        modes = page.locator("#form-declare [name=mode] option")
        for mode in ("action", "resist", "contest", "group", "new-clock"):
            expect(modes.filter(has_text=re.compile(f"^{mode}$"))).to_have_count(1)
        expect(page.locator("#form-declare [name=mode]")).to_have_value("action")

        _declare(page, "new-clock", applied=True, clock="Alarm", size="6")
        params: dict[str, JSONValue] = {
            "clock": "Alarm",
            "size": 6,
            "filled": 0,
            "kind": "progress",
        }
        assert table.state.history[-1].context == RollContext(mode="new-clock", params=params)
        clock = page.locator("#segments .segment")
        expect(clock).to_have_count(1)
        expect(clock.locator(".name")).to_have_text("Alarm")
        expect(clock.locator(".filled")).to_have_text("0/6")
        expect(clock.locator(".cell")).to_have_count(6)

        _declare(page, "resist", actor="Mara", attribute="2")
        expect(page.locator("#declare-fields label")).to_have_count(2)  # pool and attribute
        assert table.state.declared == RollContext(
            actor="Mara", mode="resist", params={"attribute": 2}
        )
        expect(page.locator("#declared")).to_have_text("Declared: Mara, resist, Attribute 2")

        _declare(page, "action", actor="Mara", rating="2", clock="Alarm", combat=True)
        declared = table.state.declared
        assert (declared.actor, declared.mode, declared.pool) == ("Mara", "action", None)
        assert {k: declared.params[k] for k in ("rating", "clock", "combat")} == {
            "rating": 2,
            "clock": "Alarm",
            "combat": True,
        }
        assert "attribute" not in declared.params  # only the chosen mode's fields
        expect(page.locator("#declared")).to_contain_text("Rating 2")
        expect(page.locator("#declared")).to_contain_text("Combat")
        publisher.record(Roll((Die(DieKind.D6, 6), Die(DieKind.D6, 5))))
        (_, filled, size), *_ = table.bar().segments
        assert filled > 0
        expect(clock.locator(".filled")).to_have_text(f"{filled}/{size}")


def test_a_battle_rhythm_table_is_set_up_and_declared_from_the_page_and_shows_its_count(
    mosquitto: Mosquitto, tmp_path: Path, page: Page
) -> None:
    settings = mosquitto.settings()
    table = Table(tmp_path / "s.db", system="battle-rhythm")
    described = get_system("battle-rhythm").describe()
    with (
        TablePublisher(table, settings),
        DisplayServer(settings, port=free_port()) as server,
    ):
        page.goto(server.url)
        count = page.locator("#tracker-count")
        expect(count).to_have_text(f"{described.tracker.position} 0")  # never "… collapse"
        expect(page.locator("#segments")).to_have_text("Nothing pending")
        expect(page.locator("#tracker-bar")).to_be_hidden()

        page.locator("summary", has_text=described.setup).click()
        page.locator("#form-setup [name=mobility]").fill("Ash:3, Bo:2")
        page.locator("#form-setup").get_by_role("button", name=described.setup).click()
        expect(page.locator("#cmd-status")).to_have_text("setup: done")

        _declare(page, "declare", applied=True, actor="Ash", action="charge", effort="3")
        assert table.state.history[-1].context == RollContext(
            actor="Ash",
            mode="declare",
            params={"action": "charge", "effort": 3, "alongside": False},
        )
        pending = page.locator("#segments .segment")
        expect(pending).to_have_count(1)
        expect(pending.locator(".name")).to_have_text("Ash: charge")
        expect(pending.locator(".filled")).to_have_text("0/3")
        expect(count).to_be_visible()

        _declare(page, "attack", actor="Bo", offense="2")
        assert table.state.declared == RollContext(
            actor="Bo", mode="attack", params={"offense": 2, "casters": "attacker"}
        )
        expect(page.locator("#declared")).to_have_text(
            "Declared: Bo, attack, Offense 2, Lots cast by attacker"  # the fields' own labels
        )


def test_the_test_system_is_set_up_and_declared_from_the_page_and_draws_its_own_bar(
    high_die: str, mosquitto: Mosquitto, tmp_path: Path, page: Page
) -> None:
    settings = mosquitto.settings()
    table = Table(tmp_path / "s.db", system=high_die)
    described = get_system(high_die).describe()
    with (
        TablePublisher(table, settings) as publisher,
        DisplayServer(settings, port=free_port()) as server,
    ):
        page.goto(server.url)
        expect(page.locator("#bar .cell")).to_have_count(7)  # -3 .. 3
        page.locator("summary", has_text=described.setup).click()
        setup = page.locator("#form-setup")
        for setting in described.settings:  # its own settings, prefilled with their defaults
            expect(setup.get_by_label(setting.label)).to_have_value(str(setting.default))
        setup.get_by_label("Span").fill("2")
        setup.get_by_role("button", name=described.setup).click()
        expect(page.locator("#cmd-status")).to_have_text("setup: done")
        expect(page.locator("#bar .cell")).to_have_count(5)  # -2 .. 2
        ends = [described.tracker.end.format(side=side) for side in ("A", "B")]
        expect(page.locator("#label-a")).to_have_text(ends[0])
        expect(page.locator("#label-b")).to_have_text(ends[1])
        expect(page.locator("#tracker-word")).to_have_text(described.tracker.position)

        form = page.locator("#form-declare")
        expect(form.locator("[name=mode]")).to_have_value(described.default_mode)
        expect(form.locator("[name=side] option")).to_have_text(["\u2013", "A", "B"])  # the sides
        _declare(page, described.default_mode, actor="Ivo", side="B")
        assert table.state.declared == RollContext(
            actor="Ivo", side="b", mode=described.default_mode
        )
        publisher.record(Roll((Die(DieKind.D6, 6),)))
        expect(page.locator("#outcome")).to_have_text("6: pushed")
        expect(page.locator("#tracker-position")).to_have_text("1")
        expect(page.locator("#tracker-length")).to_have_text("4")


SYSTEM_WORDS = re.compile(
    r"\b(tide|tide_linked|tiers?|marks|weight_[ab]|footings?|collapse|unopposed|opposed|"
    r"primitive|high.die)\b",
    re.IGNORECASE,
)
ALLOWED = re.compile(r"Tide Tower|tidetower|\"tide\"|`tide`")
"""The product's name, and the retained topic `tide` (the product's bar) by its name."""


def test_the_page_names_no_system_its_fields_or_its_modes() -> None:
    named = [
        f"{path.name}:{number}: {line.strip()}"
        for path in sorted(PAGE.iterdir())
        if path.suffix in (".html", ".js", ".css", ".py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SYSTEM_WORDS.search(ALLOWED.sub("", line))
    ]
    assert named == []
