"""The tower's TOML config: the shipped example loads; the reader's knobs come from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tidetower.firmware.config import ConfigError, load_config
from tidetower.vision.settings import ReaderSettings

EXAMPLE = Path(__file__).resolve().parents[1] / "firmware" / "tidetower.example.toml"


def _with_reader(tmp_path: Path, lines: str) -> Path:
    path = tmp_path / "tower.toml"
    path.write_text(
        EXAMPLE.read_text(encoding="utf-8") + "\n[camera.reader]\n" + lines, encoding="utf-8"
    )
    return path


def test_the_example_config_loads_with_the_default_reader() -> None:
    assert load_config(EXAMPLE).camera.reader == ReaderSettings()


def test_reader_knobs_come_from_the_config(tmp_path: Path) -> None:
    config = load_config(_with_reader(tmp_path, "min_confidence = 0.75\nsecond_look = false\n"))
    assert config.camera.reader.min_confidence == 0.75
    assert config.camera.reader.second_look is False
    assert config.camera.reader.same_die == ReaderSettings().same_die


def test_a_reader_typo_or_wrong_type_names_the_key_and_value(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(_with_reader(tmp_path, 'min_confidense = 0.7\nsame_die = "half"\n'))
    message = str(error.value)
    assert "2 problem(s)" in message
    assert "camera.reader.min_confidense" in message
    assert "camera.reader.same_die" in message and "'half'" in message


def test_asking_for_more_face_readers_than_shipped_fails_at_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(_with_reader(tmp_path, "first_look_readers = 9\n"))
    assert "camera.reader.first_look_readers" in str(error.value)
    assert "(found 9)" in str(error.value)


def test_a_missing_profile_or_unknown_pin_fails_at_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(
            _with_reader(
                tmp_path, f'profile = "{tmp_path / "nowhere"}"\npins = {{d20 = "mauve"}}\n'
            )
        )
    message = str(error.value)
    assert "camera.reader.profile" in message and "no profile in" in message
    assert "camera.reader.pins" in message and "'mauve' is not a colour" in message


def test_a_numeral_net_that_does_not_load_fails_at_start(tmp_path: Path) -> None:
    broken = tmp_path / "mine.onnx"
    broken.write_bytes(b"not a net")
    with pytest.raises(ConfigError) as error:
        load_config(_with_reader(tmp_path, f'numeral_net = "{broken}"\n'))
    assert "camera.reader.numeral_net" in str(error.value)
    assert "cannot load a numeral net" in str(error.value)


def test_pins_come_from_the_config(tmp_path: Path) -> None:
    config = load_config(_with_reader(tmp_path, 'pins = {d20 = "white"}\n'))
    assert config.camera.reader.pins == {"d20": "white"}


def test_each_table_has_snapshot_and_correction_folders_of_its_own(tmp_path: Path) -> None:
    """Issue 17 (6): two tables whose stores share a folder never share (and prune) photos."""
    tables = []
    for name in ("t1", "t2"):
        path = tmp_path / f"{name}.toml"
        path.write_text(
            f'[table]\nstore = "{tmp_path / name}.db"\n[mqtt]\ntable = "{name}"\n'
            '[camera]\nsource = "simulated"\n'
        )
        tables.append(load_config(path).table)
    one, two = tables
    assert one.snapshots == tmp_path / "t1-snapshots"
    assert one.corrections == tmp_path / "t1-corrections"
    assert {one.snapshots, one.corrections}.isdisjoint({two.snapshots, two.corrections})
    named = tmp_path / "named.toml"
    named.write_text(
        f'[table]\nstore = "{tmp_path}/t3.db"\nsnapshots = "{tmp_path}/photos"\n'
        '[camera]\nsource = "simulated"\n'
    )
    assert load_config(named).table.snapshots == tmp_path / "photos"  # named: kept as named


def _config(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "tower.toml"
    head = b'[camera]\nsource = "simulated"\n'
    path.write_bytes(head + (text.encode() if isinstance(text, str) else text))
    return path


def _problem(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return str(caught.value)


def test_a_config_that_is_not_utf8_is_one_clear_line(tmp_path: Path) -> None:
    message = _problem(_config(tmp_path, b"# caf\xe9\n"))
    assert message == f"{tmp_path / 'tower.toml'} is not UTF-8 text: byte 0xe9 on line 3"


def test_a_setting_of_the_wrong_type_names_its_key_and_the_systems_refusal(
    tmp_path: Path,
) -> None:
    message = _problem(_config(tmp_path, '[table.settings]\nmarks_threshold = "5"\n'))
    problem = message.splitlines()[1]
    assert problem.startswith("table.settings.marks_threshold: marks_threshold must be a whole")
    assert problem.endswith("(found '5')")  # the value, not the whole table
    assert "{" not in problem


def test_settings_beyond_the_general_bounds_are_refused_at_validation(tmp_path: Path) -> None:
    deep = "1"
    for key in "abcdefghi":
        deep = f"{{{key} = {deep}}}"
    for system in ("tide", "d6-pool", "graded-d100"):
        table = f'[table]\nsystem = "{system}"\n[table.settings]\nlabel_a = {deep}\n'
        problem = _problem(_config(tmp_path, table)).splitlines()[1]
        assert problem.startswith("table.settings.label_a.i.h.g.f.e.d.c: settings nest deeper")
        assert "found" not in problem  # a nested table is not echoed
    wide = "[table.settings]\nlabel_a = [" + ", ".join(["1"] * 65) + "]\n"
    assert "holds 65 items; the limit is 64" in _problem(_config(tmp_path, wide))


def test_an_unset_password_env_names_the_key_and_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TIDETOWER_TEST_PW", raising=False)
    path = _config(tmp_path, '[mqtt]\nusername = "gm"\npassword_env = "TIDETOWER_TEST_PW"\n')
    message = _problem(path)
    assert message.splitlines()[1] == (
        "mqtt.password_env: names the environment variable 'TIDETOWER_TEST_PW', which is not set"
    )
    monkeypatch.setenv("TIDETOWER_TEST_PW", "hunter2-secret")
    assert load_config(path).mqtt.password_env == "TIDETOWER_TEST_PW"


def test_no_error_echoes_a_secret(tmp_path: Path) -> None:
    secret = "hunter2-secret"
    for text in (
        f'[mqtt]\npassword = "{secret}"\n',  # not a key: refused, its value unsaid
        f'[mqtt]\npassword_env = "X"\npassword_file = "{secret}"\n',  # both: the table's error
        f"[mqtt]\npassword_file = 42\n[table]\nsnapshots_keep = -1\ntoken = '{secret}'\n",
    ):
        message = _problem(_config(tmp_path, text)).replace(str(tmp_path), "<tmp>")
        assert secret not in message and "42" not in message, message  # the path may hold 42
        assert "password" in message  # the key is named
