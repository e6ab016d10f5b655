"""A loopback HTTP server that trickles its response one byte at a time.

:class:`TrickleServer` accepts connections on 127.0.0.1, reads the request
head and then sends its response a byte every ``every`` seconds: in the
status line and headers (``where="headers"``, which never end) or in a body
that never ends (``where="body"``). Each byte arrives well within any read
timeout, so only an overall deadline ends such a request. It stops sending
when the client goes away or the server closes. A context manager.

With ``response`` (a whole HTTP response, head and body) it trickles exactly
those bytes, ``step`` at a time, then closes the connection: a slow server
that does finish. ``event_stream`` makes the never-ending body an event
stream's (chunked, one comment line that never ends), as a model
provider's would be.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType
from typing import Literal


class TrickleServer:
    def __init__(
        self,
        *,
        where: Literal["headers", "body"] = "headers",
        every: float = 0.02,
        response: bytes | None = None,
        step: int = 1,
        event_stream: bool = False,
    ) -> None:
        self._where = where
        self._every = every
        self._response = response
        self._step = step
        self._event_stream = event_stream
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
            self._read_request(conn)
            self.connected.set()
            if self._response is not None:
                self._send_slowly(conn, self._response)
                return
            if self._where == "body" and self._event_stream:
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                    b"Transfer-Encoding: chunked\r\n\r\n1\r\n:\r\n"
                )
                data = b"1\r\n \r\n"
            elif self._where == "body":
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

    def _read_request(self, conn: socket.socket) -> None:
        """The request head and a body of its ``Content-Length`` (a model
        request's JSON), so nothing unread resets the connection."""
        data = b""
        while b"\r\n\r\n" not in data:
            more = conn.recv(65536)
            if not more:
                return
            data += more
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            more = conn.recv(65536)
            if not more:
                return
            body += more

    def _send_slowly(self, conn: socket.socket, data: bytes) -> None:
        for start in range(0, len(data), self._step):
            if self._stop.wait(self._every):
                return
            try:
                conn.sendall(data[start : start + self._step])
            except OSError:
                return
