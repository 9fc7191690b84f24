"""The display server hands out the tower's tray photos and nothing else: no other file of
the photos' folder, nothing above it, no link leading out of it, whatever the path says."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from mqtt_fixtures import free_port

from tidetower.firmware.config import load_config
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.towerfiles import configured_snapshots

PHOTO = b"\xff\xd8\xff\xe0 a tray photo \xff\xd9"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[DisplayServer]:
    photos = tmp_path / "snapshots"
    photos.mkdir()
    (photos / "a52950ec-1.jpg").write_bytes(PHOTO)
    (photos / "notes.txt").write_text("not a photo")
    (tmp_path / "session.db").write_text("the session, beside the photos")
    (tmp_path / "secret.jpg").write_bytes(b"above the photos' folder")
    (photos / "away.jpg").symlink_to(tmp_path / "secret.jpg")
    with DisplayServer(MqttSettings(), port=free_port(), snapshots=photos) as running:
        yield running


def get(server: DisplayServer, path: str) -> tuple[int, bytes, str]:
    """GET `path` exactly as written (http.client sends it unnormalised)."""
    host, port = server.httpd.server_address[:2]
    connection = http.client.HTTPConnection(str(host), int(port), timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read(), response.getheader("Content-Type") or ""
    finally:
        connection.close()


def test_a_photo_is_served_as_a_jpeg(server: DisplayServer) -> None:
    status, body, kind = get(server, "/snapshots/a52950ec-1.jpg?v=2")
    assert (status, body, kind) == (200, PHOTO, "image/jpeg")


@pytest.mark.parametrize(
    "path",
    [
        "/snapshots/../session.db",
        "/snapshots/../secret.jpg",
        "/snapshots/..%2Fsecret.jpg",
        "/snapshots/%2e%2e/secret.jpg",
        "/snapshots/%2E%2E%2Fsecret.jpg",
        "/snapshots//etc/passwd",
        "/snapshots/..\\secret.jpg",
        "/snapshots/notes.txt",
        "/snapshots/.jpg",
        "/snapshots/away.jpg",  # a link out of the folder
        "/snapshots/missing-9.jpg",
        "/snapshots/a52950ec-1.jpg/",
        "/snapshots/sub/a52950ec-1.jpg",
        "/snapshots/a52950ec-1.jpg%00.txt",
        "/../session.db",
        "/snapshots",
    ],
)
def test_nothing_else_is_served(server: DisplayServer, path: str) -> None:
    status, body, _ = get(server, path)
    assert status == 404
    assert b"above the photos" not in body and b"the session" not in body


def test_without_a_photos_folder_no_photo_is_served(tmp_path: Path) -> None:
    (tmp_path / "a-1.jpg").write_bytes(PHOTO)
    with DisplayServer(MqttSettings(), port=free_port()) as running:
        assert get(running, "/snapshots/a-1.jpg")[0] == 404
        assert get(running, "/")[0] == 200


def test_the_photos_folder_comes_from_the_towers_config(tmp_path: Path) -> None:
    config = tmp_path / "tower.toml"
    config.write_text('[table]\nsnapshots = "/var/lib/tidetower/snapshots"\n')
    assert configured_snapshots(config) == Path("/var/lib/tidetower/snapshots")
    config.write_text('[mqtt]\nhost = "pi.local"\n')
    assert configured_snapshots(config) is None  # named nowhere: --snapshots DIR says it
    assert configured_snapshots(None) is None
    config.write_text('[table]\nstore = "/srv/t1.db"\n[camera]\nsource = "simulated"\n')
    assert configured_snapshots(config) == load_config(config).table.snapshots  # as the tower


def test_the_server_does_not_say_which_python_runs_it(server: DisplayServer) -> None:
    host, port = server.httpd.server_address[:2]
    connection = http.client.HTTPConnection(str(host), int(port), timeout=10)
    try:
        connection.request("GET", "/")
        said = connection.getresponse().getheader("Server") or ""
    finally:
        connection.close()
    assert said.strip() == "tidetower"


def test_display_takes_a_photos_folder_the_tower_has_not_made_yet(tmp_path: Path) -> None:
    """Issue 27 (4): `display --snapshots DIR` started before the tower serves DIR once the
    tower has made it."""
    photos, port = tmp_path / "s-snapshots", free_port()
    command = [sys.executable, "-m", "tidetower.firmware.cli", "display", "--port", str(port)]
    display = subprocess.Popen(
        [*command, "--snapshots", str(photos)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert display.stdout is not None
        assert f"at http://127.0.0.1:{port}/" in display.stdout.readline()  # it is serving
        url = f"http://127.0.0.1:{port}"
        config = json.loads(urllib.request.urlopen(f"{url}/config.json", timeout=10).read())
        assert config["snapshots"] is True
        photos.mkdir()
        (photos / "a52950ec-1.jpg").write_bytes(PHOTO)
        served = urllib.request.urlopen(f"{url}/snapshots/a52950ec-1.jpg", timeout=10).read()
        assert served == PHOTO
    finally:
        display.terminate()
        display.wait()
