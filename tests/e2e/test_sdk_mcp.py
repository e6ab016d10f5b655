"""MCP from the Agent SDKs, end to end (DEC-PROFILE-2, DEC-SET-2, DEC-CLI-7):
the stock Python SDK's in-process servers (``create_sdk_mcp_server`` and
``@tool``) reached over ``mcp_message``, against the loopback model; the
request the model received and where the tool ran are both asserted."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.python_sdk import offered_tools, result_of, run_query
from tests.fakes.provider_server import (
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
)

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is a dev extra")

pytestmark = pytest.mark.e2e

KEY = "sk-sdk-mcp-sentinel"


_run = functools.partial(run_query, api_key=KEY)


def _calc(ran: list[dict[str, Any]]) -> Any:
    @sdk.tool("add", "Add two integers", {"a": int, "b": int})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        ran.append(args)
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    return sdk.create_sdk_mcp_server(name="calc", version="1.0.0", tools=[add])


def test_an_sdk_server_tool_is_offered_and_runs_in_the_sdk_process(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    messages, requests = _run(
        tmp_path,
        [
            Reply(chunks=anthropic_tool_use("mcp__calc__add", {"a": 2, "b": 3})),
            Reply(chunks=anthropic_text_stream("five")),
        ],
        mcp_servers={"calc": _calc(ran)},
        allowed_tools=["mcp__calc__add"],
    )
    # The one-shot query's first request already offers the SDK server's tool.
    assert "mcp__calc__add" in offered_tools(requests[0])
    assert ran == [{"a": 2, "b": 3}]
    results = [
        block
        for message in requests[1].body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert [r["content"] for r in results] in (["5"], [[{"type": "text", "text": "5"}]])
    init = next(m for m in messages if type(m).__name__ == "SystemMessage")
    assert {"name": "calc", "status": "pending"} in init.data["mcp_servers"]
    assert result_of(messages).result == "five"


def test_an_sdk_tool_answers_permission_prompts(tmp_path: Path) -> None:
    """``permission_prompt_tool_name`` naming an in-process tool: the Write's
    ask goes to that tool in the SDK's process (never to can_use_tool), and
    its allow with an updated input is what runs."""
    asked: list[dict[str, Any]] = []
    target = tmp_path / "work" / "w.txt"

    @sdk.tool("decide", "Answer permission prompts", {"tool_name": str, "input": dict})
    async def decide(args: dict[str, Any]) -> dict[str, Any]:
        asked.append(args)
        updated = dict(args["input"], content="from the prompt tool")
        answer = {"behavior": "allow", "updatedInput": updated}
        return {"content": [{"type": "text", "text": json.dumps(answer)}]}

    gate = sdk.create_sdk_mcp_server(name="gate", version="1.0.0", tools=[decide])
    messages, _ = _run(
        tmp_path,
        [
            Reply(
                chunks=anthropic_tool_use(
                    "Write", {"file_path": str(target), "content": "from the model"}
                )
            ),
            Reply(chunks=anthropic_text_stream("written")),
        ],
        mcp_servers={"gate": gate},
        permission_prompt_tool_name="mcp__gate__decide",
    )
    assert [a["tool_name"] for a in asked] == ["Write"]
    assert asked[0]["input"]["content"] == "from the model"
    assert target.read_text() == "from the prompt tool"
    assert result_of(messages).result == "written"
