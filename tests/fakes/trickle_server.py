"""A loopback HTTP server that trickles its response one byte at a time.

:class:`TrickleServer` accepts connections on 127.0.0.1, reads the request
head and then sends its response a byte every ``every`` seconds: in the
status line and headers (``where="headers"``, which never end) or in a body
that never ends (``where="body"``). Each byte arrives well within any read
timeout, so only an overall deadline ends such a request. It stops sending
when the client goes away or the server closes. A context manager.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType
from typing import Literal


class TrickleServer:
    def __init__(
        self, *, where: Literal["headers", "body"] = "headers", every: float = 0.02
    ) -> None:
        self._where = where
        self._every = every
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._threads: list[threading.Thread] = []
        self._accept = threading.Thread(target=self._serve, daemon=True)
        #: Set when a connection has been accepted (the client is waiting on it).
        self.connected = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/"

    def __enter__(self) -> TrickleServer:
        self._accept.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):  # wakes the blocked accept (Linux)
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._accept.join(5)
        for thread in self._threads:
            thread.join(5)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._trickle, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _trickle(self, conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)  # the request head (small, one read on loopback)
            self.connected.set()
            if self._where == "body":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000000\r\n\r\n")
                data = b"x"
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                data = b"a"
            while not self._stop.wait(self._every):
                try:
                    conn.sendall(data)
                except OSError:  # the client gave up: the point of the test
                    return
