"""One overall deadline from connect to last byte (DECISIONS section 8), against
a real loopback server that trickles its headers or its body a byte at a time."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from agentx.providers.net_deadline import (
    CallDeadlineBackend,
    call_deadline,
    deadline_transport,
    install_call_deadlines,
)
from agentx.tools.base import ToolContext
from agentx.tools.webfetch import WebFetchTool
from agentx.turns.cancel import CancelScope
from tests.fakes.trickle_server import TrickleServer

#: The read timeout every trickled byte beats.
READ_TIMEOUT = 10.0


@pytest.mark.parametrize("where", ["headers", "body"])
def test_the_transport_ends_a_trickling_response_at_its_deadline(where: str) -> None:
    with TrickleServer(where=where) as server:  # type: ignore[arg-type]
        start = time.monotonic()
        transport = deadline_transport(start + 0.5)
        with (
            httpx.Client(transport=transport, timeout=READ_TIMEOUT) as client,
            pytest.raises(httpx.TimeoutException),
            client.stream("GET", server.url) as response,
        ):
            for _ in response.iter_raw():
                pass
        assert time.monotonic() - start < READ_TIMEOUT


def test_a_deadline_already_past_refuses_to_connect() -> None:
    with TrickleServer() as server:
        transport = deadline_transport(time.monotonic() - 1)
        with httpx.Client(transport=transport) as client, pytest.raises(httpx.ConnectTimeout):
            client.get(server.url)
        assert not server.connected.is_set()


@pytest.mark.parametrize("where", ["headers", "body"])
def test_webfetch_against_a_trickling_server_times_out(where: str) -> None:
    with TrickleServer(where=where) as server:  # type: ignore[arg-type]
        result = WebFetchTool(total_timeout_s=0.5).run(
            {"url": server.url}, ToolContext(cwd=Path("/"), env={}), CancelScope()
        )
    assert result.is_error
    assert result.content == "WebFetch: timed out after 0.5 s"


# --- a long-lived client, one deadline per call (a model provider's) ------------


@pytest.mark.parametrize("where", ["headers", "body"])
def test_a_call_deadline_ends_a_trickling_response_of_a_shared_client(where: str) -> None:
    with (
        TrickleServer(where=where) as server,  # type: ignore[arg-type]
        httpx.Client(timeout=READ_TIMEOUT) as client,
    ):
        install_call_deadlines(client)
        start = time.monotonic()
        with pytest.raises(httpx.TimeoutException):
            with call_deadline(start + 0.5):
                response = client.send(client.build_request("GET", server.url), stream=True)
            # The body is read outside the block: the connection keeps its deadline.
            try:
                for _ in response.iter_raw():
                    pass
            finally:
                response.close()
        assert time.monotonic() - start < READ_TIMEOUT


def test_outside_a_call_the_shared_client_adds_no_deadline() -> None:
    body = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
    with (
        TrickleServer(response=body, every=0.05, step=4) as server,
        httpx.Client(timeout=READ_TIMEOUT) as client,
    ):
        install_call_deadlines(client)
        with call_deadline(time.monotonic() - 1), pytest.raises(httpx.ConnectTimeout):
            client.get(server.url)  # a call already past its deadline
        assert client.get(server.url).content == b"ok"  # about 0.3 s, no deadline


def test_every_transport_of_a_client_gets_the_call_deadline_backend() -> None:
    """The environment's proxies are transports of their own (mounts)."""
    proxies = {"all://*.example.test": httpx.HTTPTransport(proxy="http://127.0.0.1:9")}
    with httpx.Client(mounts=proxies) as client:
        install_call_deadlines(client)
        for transport in [client._transport, *client._mounts.values()]:
            assert isinstance(transport, httpx.HTTPTransport)
            assert isinstance(transport._pool._network_backend, CallDeadlineBackend)
