"""Each frame source owns its `[camera]` model (issue 28, 4): chosen by `source`, refusing
the keys of other sources, each problem at its key path; all registered in one place."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from typing import get_args

import pytest
from click.testing import CliRunner

from tidetower.firmware.cli import main
from tidetower.firmware.config import ConfigError, load_config
from tidetower.vision.sources.base import SourceConfig
from tidetower.vision.sources.registry import CameraConfig

SOURCES = Path(__file__).resolve().parents[1] / "vision" / "sources"
NOT_SOURCES = {"__init__", "base", "registry"}


def _camera(tmp_path: Path, lines: str) -> Path:
    path = tmp_path / "tower.toml"
    path.write_text(f'[table]\nstore = "{tmp_path / "t.db"}"\n[camera]\n{lines}')
    return path


def test_validate_config_refuses_a_replay_without_its_path(tmp_path: Path) -> None:
    config = _camera(tmp_path, 'source = "replay"\n')
    result = CliRunner().invoke(main, ["run", "--config", str(config), "--validate-config"])
    assert result.exit_code != 0
    assert "camera.path: Field required" in result.output


@pytest.mark.parametrize(
    ("lines", "key"),
    [
        ('source = "simulated"\npath = "/frames"\n', "camera.path"),
        ('source = "picamera2"\ndevice = 1\n', "camera.device"),
        ('source = "replay"\npath = "/frames"\ndevice = 1\n', "camera.device"),
    ],
)
def test_a_source_refuses_the_keys_of_another(tmp_path: Path, lines: str, key: str) -> None:
    with pytest.raises(ConfigError, match=rf"{key}: Extra inputs are not permitted"):
        load_config(_camera(tmp_path, lines))


def test_a_missing_or_unknown_source_is_said_at_its_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"camera\.source: Field required"):
        load_config(_camera(tmp_path, "size = [640, 480]\n"))
    with pytest.raises(ConfigError, match=r"camera\.source: Input should be .*found 'kodak'"):
        load_config(_camera(tmp_path, 'source = "kodak"\n'))


def test_each_source_keeps_its_own_keys(tmp_path: Path) -> None:
    webcam = load_config(_camera(tmp_path, 'source = "webcam"\ndevice = "/dev/video2"\n'))
    assert webcam.camera.source == "webcam" and webcam.camera.device == "/dev/video2"
    replay = load_config(_camera(tmp_path, f'source = "replay"\npath = "{tmp_path}"\n'))
    assert replay.camera.source == "replay" and replay.camera.path == tmp_path


def test_every_source_module_registers_its_config() -> None:
    registered = set(get_args(get_args(CameraConfig)[0]))
    for file in sorted(SOURCES.glob("*.py")):
        if file.stem in NOT_SOURCES:
            continue
        module = importlib.import_module(f"tidetower.vision.sources.{file.stem}")
        own = [
            kind
            for _, kind in inspect.getmembers(module, inspect.isclass)
            if issubclass(kind, SourceConfig) and kind.__module__ == module.__name__
        ]
        assert len(own) == 1, f"{file.name} has no config model of its own"
        assert own[0] in registered, f"{own[0].__name__} is not in vision/sources/registry.py"
