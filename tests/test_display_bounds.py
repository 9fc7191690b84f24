"""The display server bounds every request: a client that stalls halfway is cut off, a
thousand of them do not keep the page from anyone, a client that hangs up early is no
traceback, and a broken photos' folder (a link loop) is a one-line answer."""

from __future__ import annotations

import logging
import resource
import socket
import struct
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from mqtt_fixtures import WAIT, free_port, wait_listening

from tidetower.mqtt.display.bounds import RequestReader
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.settings import MqttSettings

SERVER_FILES = 1024
"""The display's file descriptors in the flood: the usual default limit, which the red
team's 1,020 stalled clients used up."""
STALLED = 1100
"""Stalled clients in the flood: more than the display has descriptors."""
PHOTO = b"\xff\xd8\xff\xe0 a tray photo \xff\xd9"
BIG_PHOTO = 32 * 1024 * 1024
"""Bytes of a photo too big for loopback's socket buffers: its answer takes the client's reads."""
PHOTO_REQUEST = b"GET /snapshots/a52950ec-1.jpg HTTP/1.0\r\n\r\n"


@pytest.fixture
def flood_size() -> Iterator[tuple[int, int]]:
    """(stalled clients, the display's descriptors): 1,100 and 1,024 where this process may
    raise its own limit to hold them, else scaled down to what its hard limit allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = STALLED if hard == resource.RLIM_INFINITY else min(STALLED, hard - 256)
    server_files = SERVER_FILES - (STALLED - room)
    if server_files < 512:
        pytest.skip(f"a hard limit of {hard} descriptors is too few for a flood")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, room + 256), hard))
    yield room, server_files
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.fixture
def display(tmp_path: Path, flood_size: tuple[int, int]) -> Iterator[int]:
    """`tidetower display` in its own process, limited to the flood's descriptors; its port."""
    port = free_port()
    command = [sys.executable, "-m", "tidetower.firmware.cli", "display", "--port", str(port)]
    with (tmp_path / "display.log").open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=log)
    try:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.prlimit(process.pid, resource.RLIMIT_NOFILE, (flood_size[1], hard))
        wait_listening(port, alive=lambda: process.poll() is None)
        yield port
    finally:
        process.terminate()
        process.wait()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[DisplayServer]:
    photos = tmp_path / "snapshots"
    photos.mkdir()
    (photos / "a52950ec-1.jpg").write_bytes(PHOTO)
    with DisplayServer(MqttSettings(), port=free_port(), snapshots=photos) as running:
        yield running


def address(server: DisplayServer) -> tuple[str, int]:
    host, port = server.httpd.server_address[:2]
    return str(host), int(port)


def stalled_client(where: tuple[str, int], half: bytes = b"GET /display.html HT") -> socket.socket:
    """A client that sends part of its request, then nothing."""
    client = socket.create_connection(where, timeout=WAIT)
    client.sendall(half)
    return client


def hang_up_hard(client: socket.socket) -> None:
    """Close with a reset, as a phone that drops off the WiFi mid-answer looks."""
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.close()


def everything_said(client: socket.socket) -> bytes:
    """All the server sends before it ends the connection (a hang is a TimeoutError)."""
    said = b""
    while chunk := client.recv(4096):
        said += chunk
    return said


def answer(server: DisplayServer, path: str) -> bytes:
    """The server's whole answer to a GET of `path`, status line and all."""
    with stalled_client(address(server), f"GET {path} HTTP/1.0\r\n\r\n".encode()) as client:
        return everything_said(client)


def test_a_client_that_stalls_mid_request_is_cut_off(server: DisplayServer) -> None:
    with stalled_client(address(server), b"GET / HTTP/1.1\r\nHost: tower\r\n") as client:
        said = everything_said(client)  # WAIT, longer than REQUEST_SECONDS, guards a hang
    assert b"200 OK" not in said and b"<!doctype html>" not in said


def test_the_deadline_is_for_the_whole_request_not_each_read() -> None:
    client, tower = socket.socketpair()
    with client, tower:
        tower.sendall(b"GET / HT")  # bytes are waiting: only the deadline can refuse them
        buffer = bytearray(64)
        assert RequestReader(client, seconds=WAIT).readinto(buffer) == 8
        tower.sendall(b"TP/1.0\r\n")
        with pytest.raises(TimeoutError):
            RequestReader(client, seconds=0.0).readinto(buffer)


def test_a_thousand_stalled_clients_do_not_keep_the_page_from_a_player(
    display: int, flood_size: tuple[int, int]
) -> None:
    with ExitStack() as stalled:
        for count in range(flood_size[0]):
            try:
                stalled.enter_context(stalled_client(("127.0.0.1", display)))
            except TimeoutError:
                pytest.fail(f"the display took no more connections after {count} stalled")
        # Every stalled client is still connected, as far as it knows: the page loads anyway.
        with urllib.request.urlopen(f"http://127.0.0.1:{display}/", timeout=WAIT) as page:
            assert page.status == 200
            assert page.read().startswith(b"<!doctype html>")


def test_clients_that_hang_up_mid_answer_are_a_quiet_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="tidetower.mqtt.display")
    (tmp_path / "a52950ec-1.jpg").write_bytes(bytes(BIG_PHOTO))
    with DisplayServer(MqttSettings(), port=free_port(), snapshots=tmp_path) as server:
        for _ in range(5):
            with stalled_client(address(server), PHOTO_REQUEST) as client:
                client.recv(1)  # the answer has begun, and cannot have ended yet
                hang_up_hard(client)
        for _ in range(5):
            hang_up_hard(stalled_client(address(server)))
        with urllib.request.urlopen(server.url, timeout=WAIT) as page:
            assert page.status == 200
            page.read()  # all of it: a player who hangs up early would be one more line
    # Stopped, the server has waited for every client's thread: all they logged is in.
    assert "Traceback" not in capsys.readouterr().err
    gone = [r for r in caplog.records if "went away" in r.getMessage()]
    assert 5 <= len(gone) <= 10
    assert [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info] == []


@pytest.mark.parametrize("loop", ["entry", "folder"])
def test_a_link_loop_in_the_photos_folder_is_one_line(
    tmp_path: Path,
    loop: str,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    photos = tmp_path / "snapshots"
    if loop == "folder":
        photos.symlink_to(photos)
    else:
        photos.mkdir()
        (photos / "a52950ec-1.jpg").symlink_to(photos / "a52950ec-1.jpg")
    with DisplayServer(MqttSettings(), port=free_port(), snapshots=photos) as running:
        said = answer(running, "/snapshots/a52950ec-1.jpg")
    head, _, body = said.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 500 ")
    assert body == b"500 tray photo a52950ec-1.jpg cannot be read\n"
    assert "Traceback" not in capsys.readouterr().err
    assert [r.getMessage().count("\n") for r in caplog.records if r.levelno >= logging.WARNING] == [
        0
    ]
