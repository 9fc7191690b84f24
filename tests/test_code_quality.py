"""The repository's own rules, checked where every change is checked: ruff, mypy, layout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "vision", "mqtt", "firmware")
TOP_LEVEL = {
    "pyproject.toml",
    "README.md",
    "LICENSE",
    "docs",
    "bench",
    ".ci",
    "tests",
    "enclosure",
    *PACKAGES,
}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_ruff_is_clean() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = _run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    # No arguments: pyproject's [tool.mypy] names the packages and the strictness.
    result = _run("mypy")
    hint = (
        "\n(mypy finds tidetower through the install: run the README's test command, which "
        "installs with --config-settings editable_mode=strict)"
        if "Can't find package" in result.stdout + result.stderr
        else ""
    )
    assert result.returncode == 0, result.stdout + result.stderr + hint


def test_top_level_is_the_agreed_layout() -> None:
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout: the layout is checked on tracked files")
    top = {line.split("/")[0] for line in tracked.stdout.splitlines()} - {".gitignore"}
    assert top <= TOP_LEVEL, f"unexpected top-level entries: {sorted(top - TOP_LEVEL)}"
