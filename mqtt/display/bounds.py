"""The display server's bounds: each client has REQUEST_SECONDS to send its request, at most
MOST_CLIENTS are served at once, and one that goes away is a quiet line, not a traceback.

A player's phone sends its few hundred bytes at once; a client that stalls halfway (a dead
WiFi link, or someone opening connections to hang the page) must not keep a thread and a
file descriptor each until the process has none left for the rest of the table.
"""

from __future__ import annotations

import contextlib
import io
import logging
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

log = logging.getLogger(__name__)

REQUEST_SECONDS = 5.0
"""How long a client has to send its whole request line and headers, and then for each
write of the answer: a phone on the table's WiFi needs well under a second, so one still
sending after this has stalled, and its thread and socket go back to the table."""

MOST_CLIENTS = 128
"""Clients served at once, each a thread and a file descriptor: a table's phones loading the
page need a few dozen. One more cuts off the longest served, which has had the most time to
finish, so stalled clients cannot crowd out a player, and the server stays far inside a
default limit of 1,024 descriptors (a service's LimitNOFILE need not raise it)."""

GONE = (ConnectionError, TimeoutError)
"""What a client that stalled, hung up or was cut off mid-answer raises: not the server's
fault, so not worth a traceback."""


class RequestReader(io.RawIOBase):
    """A client's socket read with one deadline for its whole request, so a client that
    sends a byte now and then is cut off as surely as one that sends nothing."""

    def __init__(self, client: socket.socket, seconds: float = REQUEST_SECONDS) -> None:
        super().__init__()
        self.client = client
        self.deadline = time.monotonic() + seconds

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        """Read what has come, waiting no later than the deadline."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request was not sent in time")
        self.client.settimeout(left)
        try:
            return self.client.recv_into(buffer)
        finally:
            self.client.settimeout(REQUEST_SECONDS)  # the answer's writes, each


class BoundedHandler(BaseHTTPRequestHandler):
    """A request handler whose request must arrive within REQUEST_SECONDS."""

    timeout = REQUEST_SECONDS

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the plain reader: this one holds the request to its deadline
        self.rfile = io.BufferedReader(RequestReader(self.connection))


class Connections:
    """The clients being served, oldest first; admitting one beyond `most` cuts off the
    oldest (its thread sees the connection end, and finishes)."""

    def __init__(self, most: int = MOST_CLIENTS) -> None:
        self.most = most
        self._open: dict[socket.socket, None] = {}  # a dict keeps its order: oldest first
        self._lock = threading.Lock()  # also keeps a client from being cut once it is closed

    def admit(self, client: socket.socket) -> None:
        """Serve `client`, cutting off the oldest while that would be too many."""
        with self._lock:
            while len(self._open) >= self.most:
                _cut(self._pop_oldest())
            self._open[client] = None

    def release(self, client: socket.socket) -> None:
        """`client` is done with (before it is closed)."""
        with self._lock:
            self._open.pop(client, None)

    def cut_all(self) -> None:
        """Cut off every client, so their threads finish (the server is stopping)."""
        with self._lock:
            while self._open:
                _cut(self._pop_oldest())

    def _pop_oldest(self) -> socket.socket:
        oldest = next(iter(self._open))
        del self._open[oldest]
        return oldest


def _cut(client: socket.socket) -> None:
    """End `client`'s connection both ways; its own thread closes it."""
    with contextlib.suppress(OSError):  # it hung up meanwhile
        client.shutdown(socket.SHUT_RDWR)


def _client(request: socket.socket | tuple[bytes, socket.socket]) -> socket.socket:
    """A TCP server's request is its client's socket."""
    return request if isinstance(request, socket.socket) else request[1]


class BoundedServer(ThreadingHTTPServer):
    """ThreadingHTTPServer serving at most MOST_CLIENTS at once, quiet about clients that go
    away, and waiting for its handlers when it closes (each is bounded)."""

    daemon_threads = False  # server_close cuts their clients off, then waits for them
    request_queue_size = 1024  # a burst waits in the kernel, not dropped and retried a second on

    def __init__(self, address: tuple[str, int], handler: type[BoundedHandler]) -> None:
        self.connections = Connections()
        super().__init__(address, handler)

    def process_request(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: object
    ) -> None:
        self.connections.admit(_client(request))
        super().process_request(request, client_address)

    def shutdown_request(self, request: socket.socket | tuple[bytes, socket.socket]) -> None:
        self.connections.release(_client(request))
        super().shutdown_request(request)

    def handle_error(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: object
    ) -> None:
        """One quiet line for a client that went away; a traceback only for a real fault."""
        error = sys.exception()
        if isinstance(error, GONE):
            log.debug("display client %s went away: %s", client_address, error)
        else:
            log.error("display request from %s failed", client_address, exc_info=error)

    def server_close(self) -> None:
        self.connections.cut_all()
        super().server_close()
