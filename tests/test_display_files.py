"""The page's files are read once, when the display starts: a reinstall of the package under
a running display (its files removed, then written again) changes nothing it serves, and a
file missing at start is one line, not a page that fails on every request."""

from __future__ import annotations

import re
import shutil
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from mqtt_fixtures import WAIT, free_port

from tidetower.firmware.cli import main
from tidetower.mqtt.display import server as display
from tidetower.mqtt.display.server import FILES, DisplayServer
from tidetower.mqtt.settings import MqttSettings


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The page's files installed in a folder of their own, where the display reads them."""
    folder = tmp_path / "site-packages" / "display"
    shutil.copytree(display.PAGE_DIR, folder, ignore=shutil.ignore_patterns("*.py", "__py*"))
    monkeypatch.setattr(display, "PAGE_DIR", folder)
    return folder


def fetched(server: DisplayServer, name: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(f"{server.url}{name}", timeout=WAIT) as answer:
        return answer.status, answer.read()


def test_a_reinstall_under_a_running_display_changes_nothing_it_serves(installed: Path) -> None:
    before = {name: (installed / name).read_bytes() for name in FILES}
    with DisplayServer(MqttSettings(), port=free_port()) as server:
        shutil.rmtree(installed)  # pip uninstall: the files are gone, the display runs on
        for name in FILES:
            assert fetched(server, name) == (200, before[name]), name
        assert fetched(server, "") == (200, before["display.html"])


def test_a_page_file_missing_at_start_is_one_line(installed: Path, tmp_path: Path) -> None:
    (installed / "display.js").unlink()
    said = f"the page's display.js cannot be read in {installed} (No such file or directory)"
    with pytest.raises(OSError, match=re.escape(f"{said}: reinstall tidetower")):
        DisplayServer(MqttSettings(), port=free_port())
    result = CliRunner().invoke(main, ["display", "--export", str(tmp_path / "out")])
    assert (result.exit_code, result.output) == (78, f"Error: {said}: reinstall tidetower\n")
