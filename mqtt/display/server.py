"""`tidetower display`: serves the table page, which talks to the broker over WebSockets.

The page (display.html, display.js, attention.js, teach.js, learn.js, mqttws.js, display.css) can
also be opened from a file with `?ws=ws://HOST:PORT/mqtt&table=NAME`; `--export DIR` writes
it out for that.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import threading
from html import escape
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import click

from tidetower.engine.systems import get_system
from tidetower.engine.systems.tide.track import FOOTINGS, SIZES
from tidetower.mqtt.options import node_options, node_settings
from tidetower.mqtt.settings import MqttSettings

PAGE_DIR = Path(__file__).resolve().parent
FILES = {
    "display.html": "text/html",
    "display.js": "text/javascript",
    "attention.js": "text/javascript",
    "teach.js": "text/javascript",
    "learn.js": "text/javascript",
    "mqttws.js": "text/javascript",
    "display.css": "text/css",
}


def _choices() -> dict[str, tuple[tuple[str, ...], str]]:
    """The page's fixed choices (the Tide's sizes and footings), from the rules themselves,
    each with what a new Tide starts with selected."""
    track = get_system("tide").initial_state({}).track
    return {"size": (SIZES, track.size), "footing": (FOOTINGS, track.footing)}


def page_html() -> bytes:
    """display.html with its `<!-- choices:NAME -->` filled in as options."""
    html = (PAGE_DIR / "display.html").read_text(encoding="utf-8")
    for name, (options, chosen) in _choices().items():
        tags = "".join(
            f"<option{' selected' if o == chosen else ''}>{escape(o)}</option>" for o in options
        )
        html = html.replace(f"<!-- choices:{name} -->", tags)
    return html.encode("utf-8")


def page_config(settings: MqttSettings) -> bytes:
    """What the page needs to find its table (no secrets: the GM types a password)."""
    return json.dumps(
        {"ws_url": settings.page_ws_url(), "prefix": settings.prefix, "table": settings.table}
    ).encode()


def _handler(settings: MqttSettings) -> type[BaseHTTPRequestHandler]:
    config = page_config(settings)

    class PageHandler(BaseHTTPRequestHandler):
        """Serves the page's files and config.json; nothing else."""

        def do_GET(self) -> None:
            name = self.path.split("?")[0].lstrip("/") or "display.html"
            if name == "config.json":
                self._send(config, "application/json")
            elif name == "display.html":
                self._send(page_html(), FILES[name])
            elif name in FILES:
                self._send((PAGE_DIR / name).read_bytes(), FILES[name])
            else:
                self.send_error(HTTPStatus.NOT_FOUND)

        def _send(self, body: bytes, kind: str) -> None:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: a phone polling the page is not news."""

    return PageHandler


class DisplayServer:
    """The page's web server on its own thread."""

    def __init__(self, settings: MqttSettings, bind: str = "127.0.0.1", port: int = 8080) -> None:
        self.httpd = ThreadingHTTPServer((bind, port), _handler(settings))
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, name="display", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/"

    def start(self) -> DisplayServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> DisplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def export_page(folder: Path) -> Path:
    """Write the page's files to `folder`; returns the page to open."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        shutil.copyfile(PAGE_DIR / name, folder / name)
    (folder / "display.html").write_bytes(page_html())
    return folder / "display.html"


@click.command("display")
@node_options
@click.option("--ws-url", help="MQTT-over-WebSockets URL the page connects to")
@click.option("--bind", default="127.0.0.1", show_default=True, help="address to serve on")
@click.option("--port", default=8080, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--export",
    "export_dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="write the page to a folder to open from a file, and exit",
)
def display_command(
    config_path: Path | None,
    broker: str | None,
    table: str | None,
    ws_url: str | None,
    bind: str,
    port: int,
    export_dir: Path | None,
) -> None:
    """Serve the table display: the Tide, the last roll, odds, history and GM controls."""
    settings = node_settings(config_path, broker, table)
    if ws_url:
        settings = settings.model_copy(update={"ws_url": ws_url})
    if export_dir is not None:
        page = export_page(export_dir)
        click.echo(f"open file://{page}?ws={settings.page_ws_url()}&table={settings.table}")
        return
    try:
        server = DisplayServer(settings, bind, port)
    except OSError as error:
        raise click.ClickException(f"cannot serve on {bind}:{port}: {error.strerror}") from None
    click.echo(
        f"display for table {settings.table} at {server.url} (broker {settings.page_ws_url()})"
    )
    with server, contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()
