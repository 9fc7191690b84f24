"""The training commands are a package run with `python -m`, and say what to install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

COMMANDS = ("d6", "d6_quantize", "numerals", "recogniser_tune")
WITHOUT_EXTRA = (
    "import runpy, sys; sys.modules.update(torch=None, onnx=None); "
    "sys.argv[0] = {module!r}; runpy.run_module({module!r}, run_name='__main__')"
)
"""Run a module where torch and onnx cannot be imported, as without the `train` extra."""


def _without_extra(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run a training command with no torch and no onnx to import."""
    name = f"tidetower.vision.training.{module}"
    command = [sys.executable, "-c", WITHOUT_EXTRA.format(module=name), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("module", COMMANDS)
def test_help_needs_no_training_extra(module: str) -> None:
    result = _without_extra(module, "--help")
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout


def test_without_the_extra_it_says_what_to_install(tmp_path: Path) -> None:
    result = _without_extra("d6", "--out", str(tmp_path / "nets"))
    assert result.returncode != 0 and "tidetower[train]" in result.stderr, result.stderr
    assert not (tmp_path / "nets").exists()  # nothing written
