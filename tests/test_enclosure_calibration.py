"""The tower's config knows its enclosure: `tidetower calibrate` measures the die size the
empty tray shows and says whether it agrees with what the enclosure's geometry promises."""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from tidetower.enclosure.geometry import die_size_check, layout
from tidetower.enclosure.params import EnclosureParams
from tidetower.firmware.cli import main
from tidetower.firmware.config import ConfigError, load_config

SIZE = (1296, 972)


def tray_photo(folder: Path, per_mm: float) -> Path:
    """An empty tray seen from above: a grey floor of 150 x 112 mm at `per_mm` px per mm."""
    folder.mkdir()
    image = np.full((SIZE[1], SIZE[0], 3), 40, dtype=np.uint8)
    w, h = round(150 * per_mm), round(112 * per_mm)
    x0, y0 = (SIZE[0] - w) // 2, (SIZE[1] - h) // 2
    image[y0 : y0 + h, x0 : x0 + w] = (150, 160, 170)
    cv2.imwrite(str(folder / "empty.png"), image)
    return folder


def config_for(tmp_path: Path, photos: Path, enclosure: str = "") -> Path:
    config = tmp_path / "tower.toml"
    config.write_text(
        f'[camera]\nsource = "replay"\npath = "{photos}"\nsize = [{SIZE[0]}, {SIZE[1]}]\n'
        f'calibration = "{tmp_path / "cal"}"\n\n[enclosure]\ncamera = "cm3"\n{enclosure}'
    )
    return config


def spans(output: str) -> tuple[int, int]:
    """The measured and expected die sizes of calibrate's die-size line."""
    found = re.search(r"spans (\d+) px on this tray, (\d+) px expected", output)
    assert found, output
    return int(found[1]), int(found[2])


def expected_per_mm() -> float:
    return layout(EnclosureParams()).die_px() / 12.0


def test_calibration_says_the_die_size_agrees_with_the_enclosure(tmp_path: Path) -> None:
    photos = tray_photo(tmp_path / "photos", expected_per_mm())
    result = CliRunner().invoke(
        main, ["calibrate", "--config", str(config_for(tmp_path, photos)), "--frames", "1"]
    )
    assert result.exit_code == 0, result.output
    measured, expected = spans(result.output)
    assert expected == 88 and abs(measured - expected) <= 2  # found on a 160 px wide copy
    assert "expected from [enclosure]: agrees" in result.output


def test_calibration_warns_when_the_camera_sees_the_tray_smaller(tmp_path: Path) -> None:
    photos = tray_photo(tmp_path / "photos", 0.7 * expected_per_mm())  # the camera 40 % higher
    result = CliRunner().invoke(
        main, ["calibrate", "--config", str(config_for(tmp_path, photos)), "--frames", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "warning: a 12 mm die spans" in result.output
    measured, expected = spans(result.output)
    assert expected == 88 and abs(measured - 62) <= 2
    off = re.search(r"off by -(\d+)% \(more than 15%\)", result.output)
    assert off and 27 <= int(off[1]) <= 33, result.output
    assert (tmp_path / "cal" / "calibration.json").exists()  # a warning, the calibration stands


def test_a_frame_of_another_size_scales_the_expected_die() -> None:
    tray = (0.1, 0.1, 0.9, 0.9)
    full, half = (
        die_size_check(EnclosureParams(), tray, SIZE),
        die_size_check(EnclosureParams(), tray, (648, 486)),
    )
    assert half.expected == pytest.approx(full.expected / 2)
    assert half.measured == pytest.approx(full.measured / 2)


def test_the_config_refuses_an_enclosure_made_for_another_capture_size(tmp_path: Path) -> None:
    config = config_for(tmp_path, tmp_path, "capture = [1920, 1080]\ntray_depth = 84\n")
    with pytest.raises(
        ConfigError, match=r"enclosure: .*capture \[1920, 1080\] is not camera.size"
    ):
        load_config(config)
    bad = config_for(tmp_path, tmp_path, "tray_widht = 140\n")
    with pytest.raises(ConfigError, match=r"enclosure.tray_widht"):
        load_config(bad)
