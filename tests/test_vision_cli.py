"""`tidetower read`: the JSON-lines and annotation contract other tools depend on."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from tidetower.engine.tray import DieRead, Reading, Unreadable
from tidetower.vision.annotate import annotate, label_of
from tidetower.vision.calibrate import save_calibration
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


NUMERALS_TAUGHT = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "numerals-taught"


def test_read_with_a_calibration_or_an_empty_tray_says_so_and_leaves_the_tray_out(
    tray_png: tuple[Path, list[int]], tmp_path: Path
) -> None:
    path = tray_png[0]
    save_calibration(tmp_path / "cal", cv2.imread(str(path)), (0.0, 0.0, 1.0, 1.0))
    plain = CliRunner().invoke(read_command, [str(path)])
    assert "no dice" not in plain.output  # the dice stand out from the floor
    for option, value in (("--calibration", tmp_path / "cal"), ("--empty-tray", path)):
        # the photo is its own empty tray: nothing in it differs, so no die is read
        result = CliRunner().invoke(read_command, [str(path), option, str(value)])
        assert result.exit_code == 0, result.output
        said = "calibration" if option == "--calibration" else "empty tray"
        assert result.stderr.startswith(f"reading with the {said} {value}: "), result.stderr
        assert f"{path}: no dice" in result.stdout


def test_read_refuses_a_missing_calibration_and_both_at_once(
    tray_png: tuple[Path, list[int]], tmp_path: Path
) -> None:
    path = str(tray_png[0])
    missing = CliRunner().invoke(read_command, [path, "--calibration", str(tmp_path / "none")])
    assert missing.exit_code == 1 and len(missing.output.splitlines()) == 1
    assert str(tmp_path / "none") in missing.output and missing.stdout == ""
    both = CliRunner().invoke(
        read_command, [path, "--calibration", str(tmp_path), "--empty-tray", path]
    )
    assert both.exit_code == 2 and "not both" in both.output


def test_the_empty_tray_keeps_the_table_around_it_out_of_a_real_reading() -> None:
    if not NUMERALS_TAUGHT.parents[1].exists():
        pytest.skip("../shared is not beside this clone (a user's clone): no real photos")
    labels = json.loads((NUMERALS_TAUGHT / "labels.json").read_text())
    photos = [e for e in labels if e["dice"] and e["dice"][0].get("box")][::20]
    empty = NUMERALS_TAUGHT / "images" / "background_empty_tray.jpg"
    result = CliRunner().invoke(
        read_command,
        [*(str(NUMERALS_TAUGHT / e["file"]) for e in photos), "--json", "--empty-tray", str(empty)],
    )
    assert result.exit_code == 0, result.output
    for entry, line in zip(photos, result.stdout.splitlines(), strict=True):
        (x0, y0, x1, y1) = entry["dice"][0]["box"]
        read = json.loads(line)
        for die in read["dice"] + read["unreadable"]:  # each on the labelled die, none beside
            cx, cy = (die["box"][0] + die["box"][2]) / 2, (die["box"][1] + die["box"][3]) / 2
            assert x0 <= cx <= x1 and y0 <= cy <= y1, (entry["file"], die)


def test_annotate_labels_each_die_by_kind_and_an_unreadable_one_by_its_reason() -> None:
    box = (0.2, 0.2, 0.5, 0.5)
    assert label_of(DieRead("d6", 6, box, 0.64)) == "d6 6 0.64"
    assert label_of(DieRead("d10-tens", 0, box, 0.8)) == "d10-tens 00 0.80"
    assert label_of(Unreadable(box, "half out of frame")) == "half out of frame"
    image = np.zeros((240, 320, 3), np.uint8)
    pictures = [
        annotate(image, Reading(unreadable=(Unreadable(box, reason),)))
        for reason in ("half out of frame", "unsure: d20 6 or 9 (0.00 nats apart)")
    ]
    assert np.any(pictures[0] != pictures[1])  # the reason is drawn, not one "?" for all
