"""Subagents under the stock Python Agent SDK (claude-agent-sdk 0.2.189):
``agents=`` reaches agentx in ``initialize`` (the ``sdk`` profile,
DEC-PROFILE-2) and runs unchanged against the loopback model; the SDK parses
the subagent's records (``parent_tool_use_id``) and its task messages
(DEC-TURN-3)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.agentx_process import write_auth
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
)

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is a dev extra")

AGENTX = str(Path(sys.executable).with_name("agentx"))


def _query(options: Any) -> list[Any]:
    async def run() -> list[Any]:
        return [m async for m in sdk.query(prompt="review it", options=options)]

    return anyio.run(run)


@pytest.mark.parametrize("forward", [False, True], ids=["tool-uses-only", "forward-text"])
def test_agents_option_runs_unchanged(home: Path, tmp_path: Path, forward: bool) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    call = {"description": "Review", "prompt": "Look at a.txt", "subagent_type": "reviewer"}
    replies = [
        Reply(chunks=anthropic_tool_use("Agent", call, "toolu_agent")),
        Reply(chunks=anthropic_tool_use("Read", {"file_path": "a.txt"}, "toolu_read")),
        Reply(chunks=anthropic_text_stream("it says hello")),
        Reply(chunks=anthropic_text_stream("reviewed")),
    ]
    with ProviderServer(replies) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "m-1",
                    "api_key": "sk-test-subagent-sdk-1",
                    "endpoint": server.url,
                }
            ],
        )
        options = sdk.ClaudeAgentOptions(
            cli_path=AGENTX,
            cwd=str(tmp_path),
            env={"AGENTX_HOME": str(home)},
            allowed_tools=["Agent", "Read"],
            agents={
                "reviewer": sdk.AgentDefinition(
                    description="Reviews files",
                    prompt="You are the reviewer.",
                    tools=["Read"],
                    model="inherit",
                )
            },
            forward_subagent_text=forward,
        )
        messages = _query(options)
        requests = [r.body for r in server.requests]
    assert len(requests) == 4
    system = requests[1]["system"]
    text = system if isinstance(system, str) else "".join(b["text"] for b in system)
    assert text.startswith("You are the reviewer.")
    assert [t["name"] for t in requests[1]["tools"]] == ["Read"]
    kinds = [type(m).__name__ for m in messages]
    result = messages[kinds.index("ResultMessage")]
    assert result.subtype == "success" and result.result == "reviewed"
    nested = [
        m
        for m in messages
        if type(m).__name__ in ("AssistantMessage", "UserMessage")
        and getattr(m, "parent_tool_use_id", None) == "toolu_agent"
    ]
    nested_kinds = [type(m).__name__ for m in nested]
    if forward:
        assert nested_kinds == ["AssistantMessage", "UserMessage", "AssistantMessage"]
        assert nested[-1].content[0].text == "it says hello"
    else:
        assert nested_kinds == ["AssistantMessage", "UserMessage"]
    started = [m for m in messages if type(m).__name__ == "TaskStartedMessage"]
    done = [m for m in messages if type(m).__name__ == "TaskNotificationMessage"]
    assert len(started) == len(done) == 1
    assert started[0].task_type == "local_agent"
    assert done[0].status == "completed" and done[0].tool_use_id == "toolu_agent"


def test_subagent_hooks_as_sdk_callbacks(home: Path, tmp_path: Path) -> None:
    """SubagentStart and SubagentStop through the SDK callback transport
    (``hook_callback`` requests): the inputs as the SDKs' types define them;
    SubagentStop's block makes the subagent go on once, then it stops."""
    seen: list[dict[str, Any]] = []

    async def start(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> Any:
        seen.append(hook_input)
        return {
            "hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "CTX-SDK"}
        }

    async def stop(hook_input: dict[str, Any], tool_use_id: str | None, context: Any) -> Any:
        seen.append(hook_input)
        if hook_input["stop_hook_active"]:
            return {}
        return {"decision": "block", "reason": "ONE MORE"}

    call = {"description": "Look", "prompt": "Look around"}
    replies = [
        Reply(chunks=anthropic_tool_use("Agent", call, "toolu_agent")),
        Reply(chunks=anthropic_text_stream("first")),
        Reply(chunks=anthropic_text_stream("second")),
        Reply(chunks=anthropic_text_stream("done")),
    ]
    with ProviderServer(replies) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "m-1",
                    "api_key": "sk-test-subagent-sdk-2",
                    "endpoint": server.url,
                }
            ],
        )
        options = sdk.ClaudeAgentOptions(
            cli_path=AGENTX,
            cwd=str(tmp_path),
            env={"AGENTX_HOME": str(home)},
            hooks={
                "SubagentStart": [sdk.HookMatcher(hooks=[start])],
                "SubagentStop": [sdk.HookMatcher(matcher="general-purpose", hooks=[stop])],
            },
        )

        async def run() -> list[Any]:
            out: list[Any] = []
            async with sdk.ClaudeSDKClient(options=options) as client:
                await client.query("go")
                out.extend([m async for m in client.receive_response()])
            return out

        messages = anyio.run(run)
        requests = [r.body for r in server.requests]
    assert len(requests) == 4
    assert [b["text"] for b in requests[1]["messages"][0]["content"]] == ["Look around", "CTX-SDK"]
    assert "ONE MORE" in json.dumps(requests[2]["messages"][-1])
    kinds = [type(m).__name__ for m in messages]
    assert messages[kinds.index("ResultMessage")].result == "done"
    events = [(i["hook_event_name"], i.get("stop_hook_active")) for i in seen]
    assert events == [("SubagentStart", None), ("SubagentStop", False), ("SubagentStop", True)]
    agent_ids = {i["agent_id"] for i in seen}
    assert len(agent_ids) == 1 and {i["agent_type"] for i in seen} == {"general-purpose"}
    assert seen[1]["last_assistant_message"] == "first"
    assert "agent_transcript_path" in seen[1]
