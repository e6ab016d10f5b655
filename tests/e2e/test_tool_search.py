"""Tool search for a large MCP tool set, end to end (DEC-SET-2): fifty-odd
tools of a real stdio MCP server, the loopback model, and the requests it
received. Deferred schemas are not offered; ``ToolSearch`` loads the found
ones, which the next request offers and the model can call."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agentx_process import DUPLEX, encode, records_of, run_once, user, write_auth
from tests.fakes.provider_server import (
    ProviderServer,
    RecordedRequest,
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
)

pytestmark = pytest.mark.e2e

FAKE = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")
SERVERS = json.dumps(
    {"mcpServers": {"many": {"command": sys.executable, "args": [FAKE, "--tools", "50"]}}}
)


def run(
    home: Path, replies: list[Reply], *, window: int, env: dict[str, str] | None = None
) -> tuple[list[dict[str, Any]], list[RecordedRequest]]:
    with ProviderServer(replies) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "model-x",
                    "endpoint": server.url,
                    "api_key": "sk-tool-search",
                    "context_window": window,
                }
            ],
        )
        done = run_once(
            (*DUPLEX, "--mcp-config", SERVERS, "--allowedTools", "mcp__many__t07"),
            encode(user("go")),
            home=home,
            env=env,
            timeout=90,
        )
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        return records_of(done.stdout), list(server.requests)


def offered(request: RecordedRequest) -> dict[str, Any]:
    return {tool["name"]: tool for tool in request.body.get("tools", [])}


def test_fifty_tools_are_deferred_and_a_searched_tool_becomes_callable(home: Path) -> None:
    records, requests = run(
        home,
        [
            Reply(chunks=anthropic_tool_use("ToolSearch", {"query": "t07"}, "toolu_s")),
            Reply(chunks=anthropic_tool_use("mcp__many__t07", {"value": "x"}, "toolu_c")),
            Reply(chunks=anthropic_text_stream("done")),
        ],
        window=4000,
    )
    assert len(requests) == 3
    first = offered(requests[0])
    numbered = [n for n in first if n.startswith("mcp__many__t")]
    assert numbered == [] and "ToolSearch" in first and "Read" in first
    assert "mcp__many__t49" in first["ToolSearch"]["description"]  # named, not defined
    second = offered(requests[1])
    assert second["mcp__many__t07"]["input_schema"]["properties"]["value"]["type"] == "string"
    assert [n for n in second if n.startswith("mcp__many__t")] == ["mcp__many__t07"]
    results = [
        block
        for r in records
        if r.get("type") == "user"
        for block in r["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert '"name": "mcp__many__t07"' in results[0]["content"]
    assert results[1]["content"] == "tool 7 got x"
    # Still loaded on the request after the call.
    assert "mcp__many__t07" in offered(requests[2])
    result = next(r for r in records if r.get("type") == "result")
    assert result["result"] == "done" and result["permission_denials"] == []


@pytest.mark.parametrize(
    ("window", "env"),
    [
        pytest.param(200_000, None, id="auto-large-window"),
        pytest.param(4000, {"ENABLE_TOOL_SEARCH": "false"}, id="disabled"),
    ],
)
def test_tools_are_offered_whole_when_not_deferred(
    home: Path, window: int, env: dict[str, str] | None
) -> None:
    _, requests = run(home, [Reply(chunks=anthropic_text_stream("ok"))], window=window, env=env)
    first = offered(requests[0])
    assert "ToolSearch" not in first
    assert len([n for n in first if n.startswith("mcp__many__t")]) == 50


def test_enable_tool_search_true_defers_even_a_small_set(home: Path) -> None:
    _, requests = run(
        home,
        [Reply(chunks=anthropic_text_stream("ok"))],
        window=200_000,
        env={"ENABLE_TOOL_SEARCH": "true"},
    )
    first = offered(requests[0])
    assert "ToolSearch" in first and not [n for n in first if n.startswith("mcp__")]
