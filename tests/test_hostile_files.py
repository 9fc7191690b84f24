"""Files the tower reads are hostile (issue 26, findings 7, 8, 15, 17): a name in the
corrections' labels never reaches outside their folder; a pipe, a file nested 100,000 deep,
a number beyond reason or a secret under a mistyped key is one line, and nothing hangs,
crashes or is deleted."""

from __future__ import annotations

import json
import logging
import os
import struct
from pathlib import Path

import cv2
import numpy as np
import pytest
from click.testing import CliRunner

from tidetower.engine.files import HostileFile, inside, load_json, read_bounded
from tidetower.engine.tray import DieRead, Reading
from tidetower.firmware.cli import main
from tidetower.firmware.config import ConfigError, load_config
from tidetower.firmware.corrections import Corrections
from tidetower.mqtt.client import BrokerClient
from tidetower.mqtt.settings import load_mqtt_settings
from tidetower.vision.numerals.nets import model_id
from tidetower.vision.numerals.profile import EXAMPLES, ProfileError, load_profile
from tidetower.vision.pictures import ImageError, declared_size, load_image
from tidetower.vision.sources.base import FrameSourceError
from tidetower.vision.sources.replay import ReplaySource

DEEP = "[" * 100_000 + "]" * 100_000


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "tower.toml"
    store = tmp_path / "s.db"
    path.write_text(f'[table]\nstore = "{store}"\n[camera]\nsource = "simulated"\n{extra}')
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _problem(path: Path) -> str:
    with pytest.raises(ConfigError) as error:
        load_config(path)
    return str(error.value)


def test_names_in_the_labels_never_reach_outside_the_corrections(tmp_path: Path) -> None:
    victims = [tmp_path / "victim.txt", tmp_path / "s.db"]
    for victim in victims:
        victim.write_text("keep me")
    corrections = Corrections(tmp_path / "c", keep=2)
    hostile = {"../victim.txt": {"dice": []}, "../s.db": {"dice": []}, "/etc/x.png": {}}
    corrections.labels_path.write_text(json.dumps(hostile))
    frame, final = np.zeros((48, 64, 3), np.uint8), Reading((DieRead("d6", 4, (0, 0, 1, 1), 1),))
    for n in range(4):  # past `keep`: the oldest are pruned
        corrections.keep_correction(f"r-{n}", frame, Reading(), final)
    assert all(victim.read_text() == "keep me" for victim in victims)
    assert list(corrections.labels()) == ["r-2.png", "r-3.png"]
    for name in ("../s.db", "/etc/passwd", "", "..", "a\0b", "sub\\x.png"):
        with pytest.raises(HostileFile, match="is not a file name inside"):
            inside(corrections.folder, name)


def test_a_labels_file_nested_deep_or_a_pipe_is_set_aside_in_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    corrections = Corrections(tmp_path / "c")
    corrections.labels_path.write_text(DEEP)
    with caplog.at_level(logging.WARNING):
        assert corrections.labels() == {}
    assert "nested more than 32 deep" in caplog.records[-1].getMessage()
    corrections.labels_path.unlink()
    _fifo(corrections.labels_path)
    assert corrections.labels() == {}  # at once: a pipe is never read
    assert "not a regular file" in caplog.records[-1].getMessage()


def test_a_pipe_a_device_or_a_huge_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    with pytest.raises(HostileFile, match="not a regular file"):
        read_bounded(_fifo(tmp_path / "pipe"))
    with pytest.raises(HostileFile, match="not a regular file"):
        read_bounded("/dev/zero")
    (tmp_path / "big").write_bytes(b" " * 2000)
    with pytest.raises(HostileFile, match="2000 bytes, more than the 1000"):
        read_bounded(tmp_path / "big", 1000)
    (tmp_path / "deep.json").write_text(DEEP)
    with pytest.raises(HostileFile, match="nested more than"):
        load_json(tmp_path / "deep.json")


def test_a_pipe_named_in_the_config_is_one_line_never_a_hang(tmp_path: Path) -> None:
    pipe = _fifo(tmp_path / "pipe")
    login = f'[mqtt]\nusername = "tower"\npassword_file = "{pipe}"\n'
    with pytest.raises(ValueError, match=r"mqtt\.password_file: .*not a regular file"):
        load_config(_config(tmp_path, login)).mqtt.password()
    tls = f'[mqtt]\ntls = true\nca_file = "{pipe}"\n'
    with pytest.raises(ValueError, match=r"mqtt\.ca_file: .*not a regular file"):
        BrokerClient(load_config(_config(tmp_path, tls)).mqtt, "t")
    net = f'[camera.reader]\nnumeral_net = "{pipe}"\n'
    assert "not a regular file" in _problem(_config(tmp_path, net))
    (tmp_path / "dice").mkdir()
    (tmp_path / "dice" / "profile.json").write_text("{}")
    _fifo(tmp_path / "dice" / EXAMPLES)
    profile = f'[camera.reader]\nprofile = "{tmp_path / "dice"}"\n'
    assert "not a regular file" in _problem(_config(tmp_path, profile))
    assert "not a regular file" in _problem(_fifo(tmp_path / "config.toml"))


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("[loop]\nsettle_frames = 18446744073709551617\n", "loop.settle_frames"),
        ("[camera.reader]\nwork_size = 0\n", "camera.reader.work_size"),
        ("[camera.reader]\nwork_size = 18446744073709551617\n", "camera.reader.work_size"),
        ("[table]\ncorrections_keep = 18446744073709551617\n", "table.corrections_keep"),
        (f'[camera]\ncalibration = "{"a/" * 50_000}"\n', "camera.calibration"),
        (f'[camera]\ncalibration = "{"c" * 100_000}"\n', "camera.calibration"),
        (f'[table]\nsnapshots = "{"s" * 100_000}"\n', "table.snapshots"),
    ],
)
def test_a_number_or_a_path_beyond_reason_is_refused_at_validation(
    tmp_path: Path, line: str, key: str
) -> None:
    path = tmp_path / "tower.toml"
    text = _config(tmp_path).read_text()
    header = line.partition("\n")[0] + "\n"
    path.write_text(text.replace(header, line) if header in text else text + line)
    problem = _problem(path)
    assert key in problem and len(problem.splitlines()) == 2
    assert len(problem) < 400  # the value is shown cut short


def test_a_calibration_path_of_100000_characters_is_one_line_not_a_traceback(
    tmp_path: Path,
) -> None:
    path = _config(tmp_path)
    text = path.read_text().replace("[camera]\n", f'[camera]\ncalibration = "{"c" * 100_000}"\n')
    path.write_text(text)
    result = CliRunner().invoke(main, ["run", "--config", str(path), "--validate-config"])
    assert result.exit_code != 0 and "camera.calibration" in result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, OSError)
    assert "the limit is 4096" in result.output


def test_a_config_nested_deep_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    path.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert "nested more than 32 deep" in _problem(path)
    with pytest.raises(ValueError, match="nested"):
        load_mqtt_settings(path)


@pytest.mark.parametrize("key", ["pass", "pwd", "mqtt_pw", "tokn", "passwort"])
def test_a_secret_under_a_mistyped_key_is_never_echoed(tmp_path: Path, key: str) -> None:
    secret = "hunter2-very-secret"
    problem = _problem(_config(tmp_path, f'[mqtt]\n{key} = "{secret}"\n'))
    assert f"mqtt.{key}" in problem and secret not in problem


def test_an_echoed_value_is_cut_short(tmp_path: Path) -> None:
    huge = "x" * 500_000
    problem = _problem(_config(tmp_path, f'[loop]\nsettle_frames = "{huge}"\n'))
    assert "loop.settle_frames" in problem and len(problem) < 400
    assert "(500002 characters)" in problem


def _learn(tmp_path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(
        main, ["teach", "--config", str(_config(tmp_path)), "--from-corrections"]
    )
    return result.exit_code, result.output


def _corrections(tmp_path: Path, dice: object) -> Path:
    folder = tmp_path / "s-corrections"
    folder.mkdir(exist_ok=True)
    labels = {}
    for n in range(6):
        cv2.imwrite(str(folder / f"r-{n}.png"), np.full((120, 160, 3), 90, np.uint8))
        labels[f"r-{n}.png"] = {"dice": dice}
    (folder / "labels.json").write_text(json.dumps(labels))
    return folder


def _profile(tmp_path: Path, examples: bytes | None) -> Path:
    home = tmp_path / "dice"  # beside the corrections: where learning keeps the profile
    home.mkdir()
    (home / "profile.json").write_text("{}")
    if examples is None:
        _fifo(home / EXAMPLES)
    else:
        (home / EXAMPLES).write_bytes(examples)
    return home


def test_hostile_corrections_give_one_line_each(tmp_path: Path) -> None:
    _corrections(tmp_path, [5])  # a die that is an int
    code, said = _learn(tmp_path)
    assert code == 1 and "Traceback" not in said and "a die is {'die', 'value'}" in said
    (tmp_path / "s-corrections" / "labels.json").write_text(DEEP)
    code, said = _learn(tmp_path)
    assert code == 1 and len(said.splitlines()) == 1 and "0 corrections kept" in said


@pytest.mark.parametrize("examples", [b"PK\x03\x04 not really a zip", b"\x93NUMPY", None])
def test_a_damaged_profile_is_named_in_one_line(tmp_path: Path, examples: bytes | None) -> None:
    home = _profile(tmp_path, examples)
    with pytest.raises(ProfileError, match=f"cannot read the profile in .*{home.name}"):
        load_profile(home)


def test_a_profile_of_the_wrong_embedding_width_is_named(tmp_path: Path) -> None:
    home = tmp_path / "dice"
    home.mkdir()
    (home / "profile.json").write_text(json.dumps({"version": 1, "net": model_id()}))
    np.savez(
        home / EXAMPLES, embeddings=np.zeros((2, 7), np.float32), labels=np.array(["d6:1"] * 2)
    )
    with pytest.raises(ProfileError, match=r"its embeddings are \(2, 7\), the numeral net gives"):
        load_profile(home)


def _declaring(extension: str, width: int, height: int) -> bytes:
    """A real small picture whose header is made to declare `width` x `height`."""
    data = bytearray(cv2.imencode(extension, np.full((64, 48, 3), 120, np.uint8))[1].tobytes())
    if extension == ".png":
        data[16:24] = struct.pack(">II", width, height)
    elif extension == ".jpg":
        at = data.index(b"\xff\xc0")
        data[at + 5 : at + 9] = struct.pack(">HH", height, width)
    elif extension == ".bmp":
        data[18:26] = struct.pack("<ii", width, height)
    return bytes(data)


@pytest.mark.parametrize("extension", [".png", ".jpg", ".bmp", ".webp"])
def test_a_pictures_declared_size_is_read_from_its_header(extension: str) -> None:
    data = cv2.imencode(extension, np.full((64, 48, 3), 120, np.uint8))[1].tobytes()
    assert declared_size(data) == (48, 64)


@pytest.mark.parametrize("extension", [".png", ".jpg", ".bmp"])
def test_a_picture_declaring_too_many_pixels_is_refused_before_decoding(
    tmp_path: Path, extension: str
) -> None:
    path = tmp_path / f"huge{extension}"
    path.write_bytes(_declaring(extension, 30000, 30000))
    with pytest.raises(ImageError, match="it says it is 30000x30000 px, more than the 64"):
        load_image(path)
    (tmp_path / "frames").mkdir()
    path.rename(tmp_path / "frames" / path.name)
    with pytest.raises(FrameSourceError, match="30000x30000"):
        ReplaySource(tmp_path / "frames").read(1.0)
    read = CliRunner().invoke(main, ["read", str(tmp_path / "frames" / path.name)])
    assert read.exit_code != 0 and "30000x30000" in read.output
    assert "Traceback" not in read.output


@pytest.mark.parametrize("examples", [b"PK\x03\x04 not really a zip", b"\x93NUMPY", None])
def test_learning_on_a_damaged_profile_is_one_line(tmp_path: Path, examples: bytes | None) -> None:
    _corrections(tmp_path, [{"die": "d20", "value": 7}])
    _profile(tmp_path, examples)
    code, said = _learn(tmp_path)
    assert code == 1 and "Traceback" not in said and len(said.strip().splitlines()) == 1
    assert "cannot read the profile" in said
