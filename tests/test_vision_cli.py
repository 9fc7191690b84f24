"""`tidetower read`: the JSON-lines and annotation contract other tools depend on."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from tidetower.vision.cli import read_command
from tidetower.vision.synth import render_tray


@pytest.fixture(scope="module")
def tray_png(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[int]]:
    tray = render_tray(7)
    path = tmp_path_factory.mktemp("cli") / "tray.png"
    cv2.imwrite(str(path), tray.image)
    return path, sorted(d.value for d in tray.dice)


def test_json_line_per_image(tray_png: tuple[Path, list[int]]) -> None:
    path, values = tray_png
    result = CliRunner().invoke(read_command, [str(path), str(path), "--json"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert len(lines) == 2
    body = lines[0]
    assert list(body) == ["image", "dice", "unreadable", "ms"]
    assert body["image"] == str(path)
    assert sorted(d["value"] for d in body["dice"]) == values
    for die in body["dice"]:
        assert die["die"] == "d6" and len(die["box"]) == 4 and 0 <= die["confidence"] <= 1
        x0, y0, x1, y1 = die["box"]
        assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1


def test_bad_file_fails_clearly_but_others_still_read(
    tray_png: tuple[Path, list[int]], tmp_path: Path
) -> None:
    junk = tmp_path / "junk.jpg"
    junk.write_text("not a photo")
    args = [str(junk), str(tmp_path / "missing.png"), str(tray_png[0]), "--json"]
    result = CliRunner().invoke(read_command, args)
    assert result.exit_code == 1
    assert "not an image" in result.stderr and "missing.png" in result.stderr
    assert len(result.stderr.splitlines()) == 2
    assert json.loads(result.stdout)["image"] == str(tray_png[0])


def test_a_photo_too_small_to_hold_a_die_fails_saying_what_size_it_needs(
    tray_png: tuple[Path, list[int]], tmp_path: Path
) -> None:
    tiny = tmp_path / "thumb.png"
    cv2.imwrite(str(tiny), np.full((10, 12, 3), 128, np.uint8))
    result = CliRunner().invoke(read_command, [str(tiny), str(tray_png[0]), "--json"])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"error: {tiny}: the picture is 12x10 px, too small to hold a die: the reader needs "
        "a die at least 16 px across, so a picture at least 16x16 px"
    ]
    assert json.loads(result.stdout)["image"] == str(tray_png[0])


def test_a_folder_is_its_photos_and_piped_output_stays_json(
    tray_png: tuple[Path, list[int]], tmp_path: Path
) -> None:
    for name in ("b.png", "a.PNG"):
        (tmp_path / name).write_bytes(tray_png[0].read_bytes())
    (tmp_path / "labels.json").write_text("{}")  # not a photo: left out
    result = CliRunner().invoke(read_command, [str(tmp_path), str(tray_png[0]), "--json"])
    assert result.exit_code == 0, result.output
    read = [json.loads(line)["image"] for line in result.stdout.splitlines()]
    assert read == [str(tmp_path / "a.PNG"), str(tmp_path / "b.png"), str(tray_png[0])]
    assert result.stderr == ""  # piped: no bar, nothing extra
    no_photo = CliRunner().invoke(read_command, [str(tmp_path / "labels.json"), "--json"])
    assert no_photo.exit_code == 1  # a file that is no photo is an error, as ever
    (tmp_path / "none").mkdir()
    nothing = CliRunner().invoke(read_command, [str(tmp_path / "none")])
    assert nothing.exit_code == 2 and "no photos" in nothing.output


def test_annotate_writes_picture(tray_png: tuple[Path, list[int]], tmp_path: Path) -> None:
    out = tmp_path / "seen.png"
    result = CliRunner().invoke(read_command, [str(tray_png[0]), "--annotate", str(out)])
    assert result.exit_code == 0, result.output
    picture = cv2.imread(str(out))
    original = cv2.imread(str(tray_png[0]))
    assert picture.shape == original.shape
    assert np.any(picture != original)  # boxes were drawn


def test_annotate_needs_one_image(tray_png: tuple[Path, list[int]], tmp_path: Path) -> None:
    p = str(tray_png[0])
    result = CliRunner().invoke(read_command, [p, p, "--annotate", str(tmp_path / "x.png")])
    assert result.exit_code == 2


def test_help() -> None:
    result = CliRunner().invoke(read_command, ["--help"])
    assert result.exit_code == 0 and "--json" in result.output and "--annotate" in result.output


def test_registered_in_tidetower_command() -> None:
    from tidetower.firmware.cli import main

    result = CliRunner().invoke(main, ["read", "--help"])
    assert result.exit_code == 0
