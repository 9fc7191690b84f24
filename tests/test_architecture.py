"""Imports point one way: the engine at the bottom (with `engine/tray.py`, the nouns every
package shares), the camera side (vision) and the wire above it, the wire's nodes (the LED
bar, the display) above the wire, the firmware on top; the enclosure (the printed tower) beside
the engine, importing nothing of the others, used by the firmware alone. A module that imports
one above it fails here, naming the line."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from source_tree import parse_source

from tidetower.engine.dice import DieKind
from tidetower.engine.tray import DIE_NAMES
from tidetower.vision.kinds import KINDS

ROOT = Path(__file__).resolve().parents[1]
MAY_IMPORT = {
    "engine": {"engine"},
    "enclosure": {"enclosure"},
    "vision": {"vision", "engine"},
    "mqtt": {"mqtt", "engine"},
    "firmware": {"firmware", "mqtt", "engine", "vision", "enclosure"},
}
"""What each package may import of tidetower: itself and the packages below it."""
NODES = tuple(
    f"mqtt.{folder.name}"
    for folder in sorted((ROOT / "mqtt").iterdir())
    if (folder / "__init__.py").is_file()
)
"""The wire's nodes: the rest of mqtt/ (the wire) imports none of them."""


def imported(path: Path) -> list[tuple[int, str]]:
    """Return (line, module under tidetower) for every tidetower import of a module, lazy
    imports too."""
    found = []
    for node in ast.walk(parse_source(path)):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        found += [(node.lineno, n.split(".", 1)[1]) for n in names if n.startswith("tidetower.")]
    return found


def _inside(module: str, package: str) -> bool:
    """Return whether a dotted module is the package or inside it."""
    return module == package or module.startswith(package + ".")


def test_every_package_imports_only_itself_and_those_below_it() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports tidetower.{module}"
        for owner, allowed in MAY_IMPORT.items()
        for path in sorted((ROOT / owner).rglob("*.py"))
        for line, module in imported(path)
        if module.split(".")[0] not in allowed
    ]
    assert wrong == []


def test_the_wire_imports_none_of_its_nodes() -> None:
    wire = [p for p in sorted((ROOT / "mqtt").rglob("*.py")) if p.parent == ROOT / "mqtt"]
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports tidetower.{module}"
        for path in wire
        for line, module in imported(path)
        if any(_inside(module, node) for node in NODES)
    ]
    assert wire and wrong == []


def test_every_package_in_the_wire_is_a_node() -> None:
    """A node is a package of its own under mqtt/; the check above finds a new one itself."""
    assert {"mqtt.display", "mqtt.ledbar"} <= set(NODES)


def test_the_check_sees_an_import_upwards(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from tidetower.firmware.run import run_command\n")
    assert imported(module) == [(2, "firmware.run")]


def test_the_tower_names_every_die_the_rules_know() -> None:
    rules = {kind.value for kind in DieKind}
    assert set(DIE_NAMES) == rules | {"d10-tens"}
    assert set(KINDS) == set(DIE_NAMES) - {"d100"}


DIE = r"\bd\d+(?:-tens)?\b"
KIND_LIST = re.compile(rf"{DIE}(?:(?:\W|option)+{DIE}){{2,}}")
"""Three die names in a row: a list of kinds (a menu, an array), not one kind drawn."""


def test_the_page_takes_its_dice_from_the_engine() -> None:
    """A new die kind is one line of engine.dice.DieKind: the page's menus and faces come
    from the display's config.json, so no page file lists the kinds."""
    page = sorted((ROOT / "mqtt" / "display").glob("*.[hj]*"))
    listed = [
        f"{path.name}:{n}"
        for path in page
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if KIND_LIST.search(line)
    ]
    assert page and listed == []
    assert KIND_LIST.search('const KINDS = ["d6", "d4", "d8"];')
    assert KIND_LIST.search("<option>d6</option><option>d8</option><option>d12</option>")


TIDE_HOME = "engine/systems/tide/"
OWN_TIDE = "engine/systems/tide_of_battle/"
"""Seed 001's own tracker is a tide too: that package may say so."""
TIDE = re.compile(
    r"(?i:tide(?!tower| tower|_of_battle|-of-battle| of battle))"
    r"|tide_linked|\bweight_[ab]\b|\bfootings?\b|\bcollapse\b|\btiers?\b|\bMarks\b"
)
"""The Tide's word, its fields, its unit and its ends."""
TIDE_TOPIC = re.compile(r"/tide\b|\b[Tt]opics\.tide\b|`tide`|def tide\(self\)|\"tide\"")
"""The retained `tide` topic keeps its name on the wire: the product's bar, whatever the
system's tracker (docs/mqtt.md)."""


def tide_named(path: Path) -> list[str]:
    """Lines of a module that name the Tide (the wire's topic name aside)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rel = path.relative_to(ROOT).as_posix()
    return [f"{rel}:{n}: {line.strip()}" for n, line in enumerate(lines, 1) if names_tide(line)]


def names_tide(line: str) -> bool:
    """Whether a line names the Tide outside the topic's name."""
    return TIDE.search(TIDE_TOPIC.sub("", line)) is not None


def test_no_module_outside_the_tide_s_package_names_the_tide() -> None:
    """The Tide is a system like any other: the page, the CLIs, the LED bar and the other
    systems draw and declare it from its Description, never by name."""
    code = [
        path
        for package in ("engine", "vision", "mqtt", "firmware")
        for path in sorted((ROOT / package).rglob("*"))
        if path.suffix in (".py", ".js", ".html", ".css")
        and not path.relative_to(ROOT).as_posix().startswith((TIDE_HOME, OWN_TIDE))
    ]
    assert len(code) > 100
    assert [line for path in code for line in tide_named(path)] == []


def test_the_tide_check_sees_the_tide_and_lets_the_product_be() -> None:
    assert names_tide('if context.params.get("tide_linked"):')
    assert names_tide("class TideCommand(Command):")
    assert names_tide('label = f"{side} collapse"')
    assert names_tide("const marks = `${n} Marks`;")
    assert not names_tide('"""Tide Tower: a dice tower."""  # tidetower, TIDETOWER_GM_TOKEN')
    assert not names_tide("self.client.subscribe(self.topics.tide)")
    assert not names_tide('system = "tide-of-battle"')
