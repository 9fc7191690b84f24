"""The repository's own rules, checked where every change is checked: ruff, mypy, layout."""

from __future__ import annotations

import os
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


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_ruff_is_clean() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = _run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("package", ["engine", "firmware", "mqtt", "vision"])
def test_mypy_strict_is_clean(package: str, tmp_path: Path) -> None:
    # mypy cannot follow setuptools' editable finder, so it gets the same folder-to-package
    # mapping as pyproject's package-dir, made of symlinks.
    (tmp_path / "tidetower").mkdir()
    for name in PACKAGES:
        (tmp_path / "tidetower" / name).symlink_to(ROOT / name)
    env = {**os.environ, "MYPYPATH": str(tmp_path)}
    result = _run("mypy", "--strict", "-p", f"tidetower.{package}", env=env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_top_level_is_the_agreed_layout() -> None:
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout: the layout is checked on tracked files")
    top = {line.split("/")[0] for line in tracked.stdout.splitlines()} - {".gitignore"}
    assert top <= TOP_LEVEL, f"unexpected top-level entries: {sorted(top - TOP_LEVEL)}"
