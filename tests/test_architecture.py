"""Imports point one way: the engine at the bottom (with `engine/tray.py`, the nouns every
package shares), the camera side (vision) and the wire above it, the wire's nodes (the LED
bar, the display) above the wire, the firmware on top; the enclosure (the printed tower) beside
the engine, importing nothing of the others, used by the firmware alone. A module that imports
one above it fails here, naming the line."""

from __future__ import annotations

import ast
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
