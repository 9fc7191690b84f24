"""`tidetower display`: serves the table page, which talks to the broker over WebSockets,
and the tower's tray photos (`--snapshots DIR`) the page shows beside each roll.

The page (the files in FILES) can also be opened from a file with
`?ws=ws://HOST:PORT/mqtt&table=NAME`; `--export DIR` writes it out for that (no photos).
Served with `--lan`, it is the table's: its URL and QR code are printed here and shown on
the page (`/qr.svg`) for the other players to join.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
from http import HTTPStatus
from pathlib import Path

import click

from tidetower.engine.tray import DIE_NAMES, camera_faces
from tidetower.mqtt.display.bounds import BoundedHandler, BoundedServer
from tidetower.mqtt.display.join import EVERY_ADDRESS, join_urls, qr_svg, qr_text
from tidetower.mqtt.options import ConfigExit, lan_option, node_options, node_settings
from tidetower.mqtt.settings import MqttSettings, is_loopback
from tidetower.mqtt.towerfiles import configured_snapshots

log = logging.getLogger(__name__)

PAGE_DIR = Path(__file__).resolve().parent
FILES = {
    "display.html": "text/html",
    "display.js": "text/javascript",
    "dice.js": "text/javascript",
    "history.js": "text/javascript",
    "undo.js": "text/javascript",
    "tableview.js": "text/javascript",
    "forms.js": "text/javascript",
    "stats.js": "text/javascript",
    "tabledice.js": "text/javascript",
    "attention.js": "text/javascript",
    "teach.js": "text/javascript",
    "learn.js": "text/javascript",
    "join.js": "text/javascript",
    "mqttws.js": "text/javascript",
    "display.css": "text/css",
}
SNAPSHOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,100}\.jpg")
"""A tray photo's file name as the tower writes it (`<roll id>.jpg`): nothing else is served."""


class UnreadablePhoto(OSError):
    """A tray photo, or its folder, that is there but cannot be followed (a link loop)."""


def snapshot_path(folder: Path, name: str) -> Path | None:
    """The tray photo `name` in `folder`, or None unless it is a photo's name and the file
    lies in `folder` itself (no other folder, no link leading out of it); UnreadablePhoto
    when the folder or the entry cannot be followed, so the page says so in one line."""
    if not SNAPSHOT_NAME.fullmatch(name):
        return None
    try:
        path, home = (folder / name).resolve(strict=True), folder.resolve(strict=True)
    except FileNotFoundError:
        return None
    except (OSError, RuntimeError) as error:  # RuntimeError: a link loop, before Python 3.13
        raise UnreadablePhoto(str(error)) from None
    if path.parent != home or not path.is_file():
        return None
    return path


class PageMissing(OSError):
    """A file of the page that cannot be read where the package keeps it."""


def page_files() -> dict[str, bytes]:
    """Every file of the page (FILES), read once, or PageMissing naming the first missing."""
    try:
        return {name: (PAGE_DIR / name).read_bytes() for name in FILES}
    except OSError as error:
        name = Path(error.filename or "?").name
        said = f"the page's {name} cannot be read in {PAGE_DIR} ({error.strerror}): reinstall"
        raise PageMissing(f"{said} tidetower") from None


def gm_signs_in(settings: MqttSettings, bind: str) -> bool:
    """True when the page may reach a player or its broker guards the commands: the GM's
    controls then stay hidden until the broker accepts the GM's login. Open only for a page
    on loopback whose broker is this machine's and takes anyone's commands."""
    if settings.lan or settings.guarded or not is_loopback(bind):
        return True
    return not settings.embedded and (
        settings.username is not None or not is_loopback(settings.broker_host())
    )


def page_config(
    settings: MqttSettings, join_url: str | None = None, bind: str = "", photos: bool = False
) -> bytes:
    """What the page needs to find its table (no secrets: the GM types a password). Without
    a configured `ws_url` the page connects to `ws_host` (none: the host that served it) at
    `ws_port`; `join_url` is the address the page shows other players (none: not on a LAN);
    `bind`, where the page is served (none: every address); `photos`, whether it serves the
    tower's tray photos (else the page asks for none)."""
    host = settings.broker_host()
    return json.dumps(
        {
            "ws_url": settings.ws_url,
            "ws_host": None if is_loopback(host) else host,
            "ws_port": settings.ws_port,
            "prefix": settings.prefix,
            "table": settings.table,
            "join_url": join_url,
            "gm_sign_in": gm_signs_in(settings, bind),
            "snapshots": photos,
            "dice": [{"name": n, "faces": list(camera_faces(n))} for n in DIE_NAMES],
        }
    ).encode()


def _handler(
    settings: MqttSettings, bind: str, join_url: str | None, snapshots: Path | None
) -> type[BoundedHandler]:
    config = page_config(settings, join_url, bind, photos=snapshots is not None)
    files = page_files()  # read at start: a reinstall under a running page changes nothing
    qr = qr_svg(join_url) if join_url else None

    class PageHandler(BoundedHandler):
        """Serves the page's files, config.json, its QR code and the tray photos; nothing
        else."""

        server_version = "tidetower"  # no Python version for a guest to look up
        sys_version = ""
        error_message_format = "%(code)d %(message)s\n"
        error_content_type = "text/plain; charset=utf-8"

        def do_GET(self) -> None:
            name = self.path.split("?")[0].lstrip("/") or "display.html"
            if name == "config.json":
                self._send(config, "application/json")
            elif name == "qr.svg" and qr is not None:
                self._send(qr, "image/svg+xml")
            elif name in files:
                self._send(files[name], FILES[name])
            elif name.startswith("snapshots/") and snapshots is not None:
                self._send_photo(snapshots, name.removeprefix("snapshots/"))
            else:
                self.send_error(HTTPStatus.NOT_FOUND)

        def _send_photo(self, folder: Path, name: str) -> None:
            try:
                path = snapshot_path(folder, name)
                body = path.read_bytes() if path is not None else None
            except FileNotFoundError:  # pruned by the tower meanwhile
                body = None
            except OSError as error:
                log.warning("tray photo %s cannot be read: %s", name, error)
                self.send_error(
                    HTTPStatus.INTERNAL_SERVER_ERROR, f"tray photo {name} cannot be read"
                )
                return
            if body is None:
                self.send_error(HTTPStatus.NOT_FOUND)
            else:
                self._send(body, "image/jpeg", cache="private, max-age=86400")

        def _send(self, body: bytes, kind: str, cache: str = "no-store") -> None:
            self.send_response(HTTPStatus.OK)
            charset = "" if kind == "image/jpeg" else "; charset=utf-8"
            self.send_header("Content-Type", f"{kind}{charset}")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", cache)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: a phone polling the page is not news."""

    return PageHandler


class DisplayServer:
    """The page's web server on its own thread."""

    def __init__(
        self,
        settings: MqttSettings,
        bind: str = "127.0.0.1",
        port: int = 8080,
        join_url: str | None = None,
        snapshots: Path | None = None,
    ) -> None:
        self.join_url = join_url
        """The page's address for other players (its QR code is served as /qr.svg)."""
        handler = _handler(settings, bind, join_url, snapshots)
        self.httpd = BoundedServer((bind, port), handler)
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name="display", daemon=True
        )

    @property
    def url(self) -> str:
        """The page's address on this machine."""
        host, port = self.httpd.server_address[:2]
        return f"http://{'127.0.0.1' if host in EVERY_ADDRESS else host!s}:{port}/"

    def start(self) -> DisplayServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut off the clients still connected and wait for their threads."""
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> DisplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def export_page(folder: Path) -> Path:
    """Write the page's files to `folder`; returns the page to open."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, body in page_files().items():
        (folder / name).write_bytes(body)
    return folder / "display.html"


def _serve(
    settings: MqttSettings, bind: str, port: int, join_url: str | None, photos: Path | None
) -> DisplayServer:
    """The page's server, or one line saying why it cannot listen."""
    try:
        return DisplayServer(settings, bind, port, join_url, photos)
    except PageMissing as error:
        raise ConfigExit(str(error)) from None
    except OSError as error:
        raise ConfigExit(f"cannot serve the page on {bind}:{port}: {error.strerror}") from None


def _page_broker(settings: MqttSettings) -> str:
    """The broker the page connects to, as a person reads it."""
    if settings.ws_url or not is_loopback(settings.broker_host()):
        return settings.page_ws_url()
    return f"WebSockets port {settings.ws_port} of the host the page is opened from"


def _say_where(server: DisplayServer, settings: MqttSettings, bind: str, urls: list[str]) -> None:
    """Where the page is, for this machine and (with its QR code) for the table's phones."""
    click.echo(f"display for table {settings.table} at {server.url} ({_page_broker(settings)})")
    if not urls:
        click.echo(
            "this machine only: --lan lets the table's phones join"
            if is_loopback(bind)
            else "no LAN address found for the table's phones"
        )
        return
    also = f" (also {', '.join(urls[1:])})" if urls[1:] else ""
    click.echo(f"on the LAN: {urls[0]}{also}; players scan this to join:")
    click.echo(qr_text(urls[0]), nl=False)


@click.command("display")
@node_options
@lan_option
@click.option("--ws-url", help="MQTT-over-WebSockets URL the page connects to")
@click.option("--ws-port", type=click.IntRange(1, 65535), help="the broker's WebSockets port")
@click.option("--bind", help="address to serve on  [default: 127.0.0.1; --lan: every address]")
@click.option(
    "--port",
    default=8080,
    show_default=True,
    type=click.IntRange(1, 65535),
    help="port the page is served on (http://HOST:PORT/)",
)
@click.option(
    "--export",
    "export_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="write the page to a folder to open from a file, and exit",
)
@click.option(
    "--snapshots",
    type=click.Path(path_type=Path, file_okay=False),
    help="the tower's tray photos, shown beside each roll; served once the tower has made "
    "the folder (default: the config's [table] snapshots, if it names them)",
)
def display_command(
    config_path: Path | None,
    broker: str | None,
    table: str | None,
    lan: bool,
    ws_url: str | None,
    ws_port: int | None,
    bind: str | None,
    port: int,
    export_dir: Path | None,
    snapshots: Path | None,
) -> None:
    """Serve the table display: the tracker, the last roll, odds, history and GM controls."""
    settings = node_settings(config_path, broker, table)
    page = {"ws_url": ws_url, "ws_port": ws_port}
    settings = settings.model_copy(update={k: v for k, v in page.items() if v is not None})
    if export_dir is not None:
        try:
            page_file = export_page(export_dir)
        except PageMissing as error:
            raise ConfigExit(str(error)) from None
        click.echo(f"open file://{page_file}?ws={settings.page_ws_url()}&table={settings.table}")
        return
    bind = bind or ("0.0.0.0" if lan or settings.lan else "127.0.0.1")
    urls = join_urls(bind, port)
    photos = snapshots or configured_snapshots(config_path)
    server = _serve(settings, bind, port, urls[0] if urls else None, photos)
    _say_where(server, settings, bind, urls)
    click.echo(f"tray photos from {photos}" if photos else "no tray photos (--snapshots DIR)")
    with server, contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()
