"""MCP servers the stock TypeScript Agent SDK's way (DEC-PROFILE-2, DEC-SET-2):
``tests/e2e/ts_sdk/mcp.mjs`` runs a ``createSdkMcpServer`` server (named in
``initialize``'s ``sdkMcpServers``, reached with ``mcp_message``) and a stdio
server in ``options.mcpServers`` (the SDK's default delivery: ``initialize``'s
``mcpServers`` with ``--await-initialize``) against the loopback model; each
case asserts the request the model received, where the tool ran and the
result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.e2e.test_ts_sdk import run_driver
from tests.fakes.provider_server import (
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
)

pytestmark = pytest.mark.e2e

KEY = "sk-ts-mcp-sentinel"
FAKE = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")


def test_mcp_servers_the_ts_sdk_way(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    replies = [
        Reply(chunks=anthropic_tool_use("mcp__calc__add", {"a": 2, "b": 3})),
        Reply(chunks=anthropic_text_stream("five")),  # sdk
        Reply(chunks=anthropic_tool_use("mcp__ext__add", {"a": 4, "b": 5})),
        Reply(chunks=anthropic_text_stream("nine")),  # stdio
    ]
    steps, done, requests = run_driver(
        "mcp.mjs", replies, home, work, sys.executable, FAKE, api_key=KEY, timeout=240
    )
    assert done.returncode == 0 and "stdio" in steps, (steps.get("failed"), done.stderr[-3000:])
    assert len(requests) == 4

    sdk = steps["sdk"]
    offered = [t["name"] for t in requests[0].body["tools"]]
    assert "mcp__calc__add" in offered
    assert sdk["ran"] == [{"a": 2, "b": 3}]  # the tool ran in the SDK's process
    # system/init was written at start, before initialize named the server.
    assert sdk["servers"] == []
    assert '"5"' in json.dumps(requests[1].body["messages"]) or "5" in json.dumps(
        requests[1].body["messages"][-1]
    )
    assert sdk["result"] == "five" and sdk["subtype"] == "success"

    stdio = steps["stdio"]
    assert "mcp__ext__add" in [t["name"] for t in requests[2].body["tools"]]
    assert stdio["result"] == "nine" and stdio["subtype"] == "success"
    assert "9" in json.dumps(requests[3].body["messages"][-1])
    # Nothing said that the servers sent in initialize were not loaded.
    assert "did not load the MCP servers" not in done.stderr
