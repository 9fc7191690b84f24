"""The enclosure's geometry, without CAD: the camera sees the whole tray floor and a small die
large enough, wherever the tray's size puts the mount; the light's mirror image stays out of
the picture; a ball 1.5 x the largest die's diagonal has a way down; bad parameters are
refused with the key to change."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from tidetower.enclosure import bom
from tidetower.enclosure.chute import chute, die_diagonal
from tidetower.enclosure.geometry import (
    Layout,
    Rect,
    glare_in_picture,
    glare_pixels,
    layout,
    light_windows,
)
from tidetower.enclosure.params import EnclosureParams, ParamsError, load_params, params_from_table
from tidetower.firmware.cli import main

CAMERAS = ("cm3", "v2")


def floor_corners_px(lay: Layout) -> list[tuple[float, float]]:
    p = lay.params
    x, y = p.tray_width / 2, p.tray_depth / 2
    return [lay.pixel(sx * x, sy * y) for sx in (-1, 1) for sy in (-1, 1)]


def assert_sees_tray(lay: Layout) -> None:
    """Every corner of the floor inside the picture, frame_margin's worth of pixels in."""
    w, h = lay.params.capture
    margin_px = lay.params.frame_margin * lay.die_px(1.0)  # pixels per mm at the floor
    for u, v in floor_corners_px(lay):
        assert margin_px - 1e-6 <= u <= w - margin_px + 1e-6
        assert margin_px - 1e-6 <= v <= h - margin_px + 1e-6
    assert lay.die_px(12.0) >= 40


@pytest.mark.parametrize("camera", CAMERAS)
def test_the_default_tower_sees_the_whole_floor_and_a_12mm_die_at_40px(camera: str) -> None:
    lay = layout(EnclosureParams(camera=camera))
    assert_sees_tray(lay)
    assert lay.die_px(12.0) == pytest.approx(88.4, abs=0.5)


@settings(max_examples=60, deadline=None)
@given(
    camera=st.sampled_from(CAMERAS),
    width=st.floats(100, 150),
    shape=st.floats(0.8, 1.2),
    capture=st.sampled_from([(1296, 972), (1536, 864), (2028, 1520), (1920, 1080)]),
)
def test_any_tray_size_moves_the_mount_so_the_camera_still_sees_it(
    camera: str, width: float, shape: float, capture: tuple[int, int]
) -> None:
    """Trays 100 to 150 mm wide, their shape within 20 % of the picture's: all print."""
    depth = width * capture[1] / capture[0] * shape
    params = EnclosureParams(
        camera=camera, tray_width=width, tray_depth=depth, capture=capture, dice=1
    )
    lay = layout(params)
    assert_sees_tray(lay)
    smaller = layout(dataclasses.replace(params, tray_width=width * 0.9, tray_depth=depth * 0.9))
    assert smaller.lens_height < lay.lens_height
    assert not any(glare_in_picture(lay, r) for r in light_windows(lay))


def test_a_4_3_capture_of_the_16_9_camera_module_3_is_narrower() -> None:
    wide = layout(EnclosureParams(capture=(1536, 864), tray_depth=84))
    square = layout(EnclosureParams(capture=(1296, 972)))
    assert wide.tan_h == pytest.approx(math.tan(math.radians(33)), rel=0.03)
    assert square.tan_h == pytest.approx(square.tan_v * 4 / 3)
    assert square.tan_h < wide.tan_h


@pytest.mark.parametrize("camera", CAMERAS)
def test_the_light_bars_mirror_image_in_the_floor_is_outside_the_picture(camera: str) -> None:
    lay = layout(EnclosureParams(camera=camera))
    assert glare_pixels(lay, light_windows(lay)) == 0
    assert not any(glare_in_picture(lay, r) for r in light_windows(lay))
    # the bars sit just far enough out: 10 mm nearer and the floor shows them
    nearer = [
        dataclasses.replace(r, at=r.at - math.copysign(10 + lay.params.glare_margin, r.at))
        for r in light_windows(lay)
    ]
    assert glare_pixels(lay, nearer) > 0
    assert all(glare_in_picture(lay, r) for r in nearer)


def test_a_ring_light_round_the_lens_would_glare() -> None:
    lay = layout(EnclosureParams())
    ring = Rect(2, lay.lens_height - 2, ((-25.0, 25.0), (-25.0, 25.0)))  # facing down round it
    assert glare_pixels(lay, [ring]) > 0
    assert glare_in_picture(lay, ring)


def test_the_ball_is_one_and_a_half_times_the_largest_dies_diagonal() -> None:
    params = EnclosureParams()
    assert die_diagonal(params) == pytest.approx(16 * math.sqrt(3))
    c = chute(params)
    assert c.ball == pytest.approx(1.5 * 16 * math.sqrt(3))
    assert c.gap >= c.ball and c.width >= c.ball
    path = c.path()
    assert path[0][1] > c.top and path[-1][1] == pytest.approx(c.ball / 2 + 2.0)
    assert c.origin_x + path[-1][0] > -params.tray_width / 2 + c.ball / 2  # ends on the floor


def test_the_beam_sits_below_the_smallest_die_over_the_inner_ramp() -> None:
    c = chute(EnclosureParams())
    x, z = c.beam
    assert 0 < z - c.ramp.z(x) <= EnclosureParams().min_die / 2


def test_default_parameters_make_a_tower_that_fits_the_printer() -> None:
    EnclosureParams()  # refuses itself otherwise


@pytest.mark.parametrize(
    ("table", "names"),
    [
        ({"tray_width": 200, "tray_depth": 160}, "camera mast would be"),
        ({"tray_width": 180, "tray_depth": 100}, "tray with its mast socket"),
        ({"tray_width": 80, "tray_depth": 60}, "tray_width x tray_depth"),
        ({"baffles": 3}, "tower would be"),
        ({"tray_wdth": 150}, "enclosure.tray_wdth"),
        ({"wall": 1.0}, "enclosure.wall"),
        ({"camera": "hq"}, "enclosure.camera"),
    ],
)
def test_bad_parameters_are_refused_naming_what_to_change(
    table: dict[str, object], names: str
) -> None:
    with pytest.raises(ParamsError, match=names):
        params_from_table(table)


def test_parameters_come_from_the_enclosure_table_of_a_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "tower.toml"
    path.write_text(
        '[camera]\nsource = "simulated"\n\n[enclosure]\ncamera = "v2"\ntray_width = 140\n'
    )
    assert load_params(path) == EnclosureParams(camera="v2", tray_width=140)
    (tmp_path / "none.toml").write_text("[camera]\n")
    with pytest.raises(ParamsError, match=r"no \[enclosure\] table"):
        load_params(tmp_path / "none.toml")
    with pytest.raises(ValidationError):
        dataclasses.replace(EnclosureParams(), tray_width=-3)


def test_the_bill_names_the_chosen_camera_and_every_fastener() -> None:
    items = bom.bought(EnclosureParams(camera="v2"))
    names = [i.item for i in items]
    assert "Raspberry Pi Camera Module v2" in names
    assert all(f in names for f in bom.FASTENERS)
    assert any("WS2812B" in n for n in names)
    text = bom.markdown(items, [("Tower", 1, "upright")])
    assert "| Tower | 1 | upright |" in text
    assert bom.csv_text(items, []).splitlines()[0] == "kind,item,quantity,note"


def test_the_camera_cable_is_the_shortest_on_sale_that_reaches() -> None:
    path, cable = bom.camera_cable(EnclosureParams())
    assert path <= cable and cable in bom.CABLES


def test_enclosure_geometry_prints_the_numbers_without_cad() -> None:
    result = CliRunner().invoke(main, ["enclosure", "geometry"])
    assert result.exit_code == 0, result.output
    assert "lens: 176.5 mm" in result.output and "88.4 px" in result.output


def test_enclosure_build_without_the_cad_extra_says_how_to_install_it(tmp_path: Path) -> None:
    script = (
        "import sys; sys.modules['build123d'] = None\n"  # as on a Pi without the extra
        "from tidetower.firmware.cli import main\n"
        f"main(['enclosure', 'build', '--out', {str(tmp_path / 'out')!r}])\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 1
    assert "pip install 'tidetower[cad]'" in result.stderr
    assert not (tmp_path / "out").exists()


def test_enclosure_build_refuses_a_bad_config_before_building(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("[enclosure]\ntray_width = 500\n")
    result = CliRunner().invoke(
        main, ["enclosure", "build", "--config", str(path), "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 1
    assert "enclosure.tray_width" in result.output
    assert not (tmp_path / "o").exists()
