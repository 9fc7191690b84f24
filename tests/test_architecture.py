"""Imports point one way: engine and vision at the bottom, the wire and its nodes above them,
the firmware on top. A package that imports one above it fails here, naming the line."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAY_IMPORT = {
    "engine": {"engine"},
    "vision": {"vision"},
    "mqtt": {"mqtt", "engine"},
    "firmware": {"firmware", "mqtt", "engine", "vision"},
}
"""What each package may import of tidetower: itself and the packages below it."""


def imported(path: Path) -> list[tuple[int, str]]:
    """Return (line, package) for every `tidetower.<package>` a module imports, lazily too."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "tidetower" and len(parts) > 1:
                found.append((node.lineno, parts[1]))
    return found


def test_every_package_imports_only_itself_and_those_below_it() -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports tidetower.{package}"
        for owner, allowed in MAY_IMPORT.items()
        for path in sorted((ROOT / owner).rglob("*.py"))
        for line, package in imported(path)
        if package not in allowed
    ]
    assert wrong == []


def test_the_check_sees_an_import_upwards(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from tidetower.firmware.run import run_command\n")
    assert imported(module) == [(2, "firmware")]
