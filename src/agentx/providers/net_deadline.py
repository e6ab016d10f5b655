"""One overall deadline for a network operation, from connect to last byte (DECISIONS section 8).

httpx's timeouts bound each socket operation, not the operation as a whole:
a server that trickles its response (headers included) one byte at a time,
each byte before the read timeout, keeps a request open for ever. The
:class:`DeadlineBackend` is httpcore's network backend with every connect,
TLS handshake, read and write given at most what is left until one fixed
deadline (a ``time.monotonic`` value); past it the operation fails with
httpcore's timeout, which httpx reports as its ``TimeoutException``. So the
request ends at the deadline whatever the server sends, and no thread or
timer is needed. Name resolution runs inside the connect and is bounded by
the system resolver's own timeouts.

:func:`deadline_transport` is an httpx transport whose pool uses it.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx


def _left(deadline: float, timeout: float | None, expired: type[Exception]) -> float:
    """The time one socket operation may take: its own timeout, at most what
    is left until ``deadline``; ``expired`` is raised once nothing is left."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise expired("the operation's overall deadline passed")
    return remaining if timeout is None else min(timeout, remaining)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(self._deadline, timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(self._deadline, timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        left = _left(self._deadline, timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, left), self._deadline
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's synchronous backend under one overall deadline (see the module)."""

    def __init__(self, deadline: float, inner: httpcore.NetworkBackend | None = None) -> None:
        self._deadline = deadline
        self._inner = inner if inner is not None else httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = _left(self._deadline, timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, left, local_address, socket_options)
        return _DeadlineStream(stream, self._deadline)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        left = _left(self._deadline, timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(
            self._inner.connect_unix_socket(path, left, socket_options), self._deadline
        )

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(min(seconds, max(0.0, self._deadline - time.monotonic())))


def deadline_transport(deadline: float) -> httpx.HTTPTransport:
    """An httpx transport (no proxies from the environment) whose every
    connection works under ``deadline`` (a ``time.monotonic`` value)."""
    transport = httpx.HTTPTransport(trust_env=False)
    # httpx builds its httpcore pool in ``_pool`` and exposes no way to give it
    # a network backend; connections are made lazily from the pool's backend,
    # so swapping it here covers every connection of this transport.
    # tests/unit/providers/test_net_deadline.py fails if httpx changes this.
    pool = transport._pool
    if not isinstance(pool, httpcore.ConnectionPool) or not hasattr(pool, "_network_backend"):
        raise RuntimeError("this httpx version builds its pool differently; see net_deadline")
    pool._network_backend = DeadlineBackend(deadline, pool._network_backend)
    return transport
