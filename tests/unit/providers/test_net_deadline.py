"""One overall deadline from connect to last byte (DECISIONS section 8), against
a real loopback server that trickles its headers or its body a byte at a time."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from agentx.providers.net_deadline import deadline_transport
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
