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
:func:`install_call_deadlines` gives a long-lived client (a model provider's,
with its environment's proxies) the same bound per call: each connection
made inside :func:`call_deadline` works under that call's deadline.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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


#: The deadline of the call now connecting (:func:`call_deadline`), if any.
_CALL_DEADLINE: ContextVar[float | None] = ContextVar("agentx_call_deadline", default=None)


@contextmanager
def call_deadline(deadline: float) -> Iterator[None]:
    """Connections a client of :func:`install_call_deadlines` makes inside
    this block work under ``deadline`` (a ``time.monotonic`` value) until
    they close, wherever they are read from later."""
    token = _CALL_DEADLINE.set(deadline)
    try:
        yield
    finally:
        _CALL_DEADLINE.reset(token)


class CallDeadlineBackend(httpcore.NetworkBackend):
    """A backend that puts each connection under the deadline of the call
    that makes it (:func:`call_deadline`); outside one it adds none."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def _backend(self) -> httpcore.NetworkBackend:
        deadline = _CALL_DEADLINE.get()
        return self._inner if deadline is None else DeadlineBackend(deadline, self._inner)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        return self._backend().connect_tcp(host, port, timeout, local_address, socket_options)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        return self._backend().connect_unix_socket(path, timeout, socket_options)

    def sleep(self, seconds: float) -> None:
        self._backend().sleep(seconds)


def _pool(transport: httpx.HTTPTransport) -> httpcore.ConnectionPool:
    # httpx builds its httpcore pool in ``_pool`` and exposes no way to give it
    # a network backend; connections are made lazily from the pool's backend,
    # so swapping it covers every connection of the transport.
    # tests/unit/providers/test_net_deadline.py fails if httpx changes this.
    pool = transport._pool
    if not isinstance(pool, httpcore.ConnectionPool) or not hasattr(pool, "_network_backend"):
        raise RuntimeError("this httpx version builds its pool differently; see net_deadline")
    return pool


def install_call_deadlines(client: httpx.Client) -> None:
    """Give every transport of ``client`` (its own and each proxy's) a
    :class:`CallDeadlineBackend`; a transport of another kind is refused."""
    transports = [client._transport, *client._mounts.values()]
    for transport in transports:
        if transport is None:
            continue
        if not isinstance(transport, httpx.HTTPTransport):
            raise RuntimeError("a client transport is not httpx's HTTP transport; see net_deadline")
        pool = _pool(transport)
        pool._network_backend = CallDeadlineBackend(pool._network_backend)


def deadline_transport(deadline: float) -> httpx.HTTPTransport:
    """An httpx transport (no proxies from the environment) whose every
    connection works under ``deadline`` (a ``time.monotonic`` value)."""
    transport = httpx.HTTPTransport(trust_env=False)
    pool = _pool(transport)
    pool._network_backend = DeadlineBackend(deadline, pool._network_backend)
    return transport
