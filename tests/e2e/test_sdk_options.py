"""Claude Code's options as the stock Python Agent SDK passes them, one test
per option, against the loopback model (DEC-CLI-5, DEC-PERM-MODE,
DEC-PROFILE-2): each asserts the request the model received and the
messages and callbacks the SDK produced."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.agentx_process import write_auth
from tests.e2e.python_sdk import AGENTX, offered_tools, result_of, run_query
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_event,
    anthropic_text_stream,
)

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is a dev extra")

KEY = "sk-sdk-options-sentinel"


def _tool_call(name: str, tool_input: dict[str, Any]) -> tuple[bytes, ...]:
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_t",
            "type": "message",
            "role": "assistant",
            "model": "model-x",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    }
    block = {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}
    delta = {"type": "input_json_delta", "partial_json": json.dumps(tool_input)}
    return (
        anthropic_event(start),
        anthropic_event({"type": "content_block_start", "index": 0, "content_block": block}),
        anthropic_event({"type": "content_block_delta", "index": 0, "delta": delta}),
        anthropic_event({"type": "content_block_stop", "index": 0}),
        anthropic_event(
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}}
        ),
        anthropic_event({"type": "message_stop"}),
    )


_run = functools.partial(run_query, api_key=KEY)


def test_permission_mode_plan_tells_the_model(tmp_path: Path) -> None:
    messages, requests = _run(
        tmp_path, [Reply(chunks=anthropic_text_stream("a plan"))], permission_mode="plan"
    )
    assert result_of(messages).result == "a plan"
    (request,) = requests
    assert "Plan mode is active" in json.dumps(request.body["system"])
    assert messages[0].data["permissionMode"] == "plan"


def test_default_mode_says_nothing_of_plan_mode(tmp_path: Path) -> None:
    _, requests = _run(tmp_path, [Reply(chunks=anthropic_text_stream("ok"))])
    assert "Plan mode" not in json.dumps(requests[0].body.get("system", ""))


def test_disallowed_tools_are_not_offered(tmp_path: Path) -> None:
    messages, requests = _run(
        tmp_path,
        [Reply(chunks=anthropic_text_stream("ok"))],
        disallowed_tools=["Bash", "Edit"],
    )
    offered = offered_tools(requests[0])
    assert "Bash" not in offered and "Edit" not in offered and "Write" not in offered
    assert "Read" in offered
    assert "Bash" not in messages[0].data["tools"]


def test_a_partly_denied_tool_stays_offered(tmp_path: Path) -> None:
    _, requests = _run(
        tmp_path, [Reply(chunks=anthropic_text_stream("ok"))], disallowed_tools=["Bash(rm:*)"]
    )
    assert "Bash" in offered_tools(requests[0])


def test_tools_preset_default_offers_every_tool(tmp_path: Path) -> None:
    messages, requests = _run(
        tmp_path,
        [Reply(chunks=anthropic_text_stream("ok"))],
        tools={"type": "preset", "preset": "claude_code"},
    )
    assert result_of(messages).subtype == "success"
    assert {"Read", "Write", "Edit", "Bash", "Glob", "Grep"} <= set(offered_tools(requests[0]))


def test_allowed_tools_with_a_space_inside_parentheses(tmp_path: Path) -> None:
    """``Bash(echo hi:*)`` is one rule: the command runs without asking."""
    asked: list[str] = []

    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(tool)
        return sdk.PermissionResultDeny(message="no")

    replies = [
        Reply(chunks=_tool_call("Bash", {"command": "echo hi there"})),
        Reply(chunks=anthropic_text_stream("done")),
    ]
    messages, requests = _run(
        tmp_path, replies, allowed_tools=["Bash(echo hi:*)"], can_use_tool=can_use_tool
    )
    assert result_of(messages).result == "done"
    assert asked == []
    assert "hi there" in json.dumps(requests[1].body["messages"])


def test_dont_ask_denies_without_asking(tmp_path: Path) -> None:
    asked: list[str] = []

    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(tool)
        return sdk.PermissionResultAllow()

    target = tmp_path / "work" / "w.txt"
    replies = [
        Reply(chunks=_tool_call("Write", {"file_path": str(target), "content": "x"})),
        Reply(chunks=anthropic_text_stream("denied then")),
    ]
    messages, requests = _run(
        tmp_path, replies, permission_mode="dontAsk", can_use_tool=can_use_tool
    )
    result = result_of(messages)
    assert asked == [] and not target.exists()
    assert [d["tool_name"] for d in result.permission_denials] == ["Write"]
    assert "dontAsk" in json.dumps(requests[1].body["messages"])


def test_auto_allows_an_edit_and_asks_for_bash(tmp_path: Path) -> None:
    asked: list[str] = []

    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(tool)
        return sdk.PermissionResultDeny(message="not now")

    target = tmp_path / "work" / "w.txt"
    replies = [
        Reply(chunks=_tool_call("Write", {"file_path": str(target), "content": "x"})),
        Reply(chunks=_tool_call("Bash", {"command": "echo hi"})),
        Reply(chunks=anthropic_text_stream("done")),
    ]
    messages, _ = _run(tmp_path, replies, permission_mode="auto", can_use_tool=can_use_tool)
    assert result_of(messages).result == "done"
    assert target.read_text() == "x"
    assert asked == ["Bash"]


def test_client_app_reaches_the_user_agent(tmp_path: Path) -> None:
    _, requests = _run(
        tmp_path, [Reply(chunks=anthropic_text_stream("ok"))], client_app="my-app/1.2"
    )
    agent = {k.lower(): v for k, v in requests[0].headers.items()}["user-agent"]
    assert agent.startswith("agentx/") and agent.endswith(" client-app/my-app/1.2")


def test_without_client_app_the_user_agent_is_agentx(tmp_path: Path) -> None:
    _, requests = _run(tmp_path, [Reply(chunks=anthropic_text_stream("ok"))])
    agent = {k.lower(): v for k, v in requests[0].headers.items()}["user-agent"]
    assert agent.startswith("agentx/") and "client-app" not in agent


def test_set_model_switches_the_next_request(tmp_path: Path) -> None:
    """DEC-PROFILE-2: ``ClaudeSDKClient.set_model`` between two prompts; the
    second request names the new model."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    replies = [Reply(chunks=anthropic_text_stream("one")), Reply(chunks=anthropic_text_stream("2"))]
    with ProviderServer(replies) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "model-x",
                    "models": ["model-y"],
                    "endpoint": server.url,
                    "api_key": KEY,
                }
            ],
        )

        async def run() -> list[Any]:
            opts = sdk.ClaudeAgentOptions(
                cli_path=AGENTX, cwd=str(work), env={"AGENTX_HOME": str(home)}
            )
            seen: list[Any] = []
            async with sdk.ClaudeSDKClient(options=opts) as client:
                await client.query("one")
                seen += [m async for m in client.receive_response()]
                await client.set_model("model-y")
                await client.query("two")
                seen += [m async for m in client.receive_response()]
            return seen

        messages = anyio.run(run)
        requests = list(server.requests)
    assert [r.body["model"] for r in requests] == ["model-x", "model-y"]
    assistants = [m for m in messages if type(m).__name__ == "AssistantMessage"]
    assert [a.model for a in assistants] == ["model-x", "model-y"]


def test_resume_session_at_and_drops_turn(tmp_path: Path) -> None:
    """DEC-CLI-5: ``resume`` + ``resume_session_at`` (an ``AssistantMessage.uuid``
    seen live) + ``fork_session``: the model receives the conversation up to
    that message; a ``resume_drops_turn`` that names no prompt after it is
    refused with the text the SDK documents (the accepted case is in
    tests/store/test_e2e_resume_at.py)."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    replies = [Reply(chunks=anthropic_text_stream(t)) for t in ("ONE", "TWO", "AGAIN")]
    lines: list[str] = []
    with ProviderServer(replies) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "model-x",
                    "endpoint": server.url,
                    "api_key": KEY,
                }
            ],
        )
        env = {"AGENTX_HOME": str(home)}

        async def first() -> list[Any]:
            opts = sdk.ClaudeAgentOptions(cli_path=AGENTX, cwd=str(work), env=env)
            seen: list[Any] = []
            async with sdk.ClaudeSDKClient(options=opts) as client:
                for text in ("one", "two"):
                    await client.query(text)
                    seen += [m async for m in client.receive_response()]
            return seen

        seen = anyio.run(first)
        session_id = result_of(seen).session_id
        assistants = [m for m in seen if type(m).__name__ == "AssistantMessage"]

        async def again(drops: str | None) -> list[Any]:
            opts = sdk.ClaudeAgentOptions(
                cli_path=AGENTX,
                cwd=str(work),
                env=env,
                resume=session_id,
                fork_session=True,
                resume_session_at=assistants[0].uuid,
                resume_drops_turn=drops,
                stderr=lines.append,
            )
            return [m async for m in sdk.query(prompt="again", options=opts)]

        with pytest.raises(Exception, match="exit code"):
            anyio.run(again, "not-the-prompt")
        assert any("Resume rejected by --resume-drops-turn:" in line for line in lines)
        forked = anyio.run(again, None)
        requests = list(server.requests)
    assert result_of(forked).result == "AGAIN" and result_of(forked).session_id != session_id
    texts = [
        m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
        for m in requests[-1].body["messages"]
    ]
    assert texts == ["one", "ONE", "again"]
