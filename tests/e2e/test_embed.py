"""The embedding API: the same actor system in-process (DEC-CLI-1, DESIGN "Ways in")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentx.embed import Agent, ControlError
from agentx.messages.frozen import FrozenDict


def _scripted(home: Path, turns: list[dict[str, object]], **extra: object) -> None:
    script = home / "script.json"
    script.write_text(json.dumps({"version": 1, "turns": turns}))
    provider = {"id": "s", "type": "scripted", "model": "m", "script": str(script), **extra}
    (home / "auth.json").write_text(json.dumps({"version": 2, "providers": [provider]}))


def test_prompt_answer_and_cost(home: Path) -> None:
    with Agent(home=home, cwd=home) as agent:
        assert agent.init["subtype"] == "init"
        result = agent.prompt("What is 2 + 2?")
        assert result["result"] == "What is 2 + 2?"
        assert result["total_cost_usd"] == 0
        with pytest.raises(TypeError):
            result["result"] = "mutated"  # type: ignore[index]
    assert agent.close() == 0


def test_permission_callable_and_control_errors(home: Path) -> None:
    target = home / "out.txt"
    write = {"tool_use": {"name": "Write", "input": {"file_path": str(target), "content": "hi"}}}
    _scripted(home, [{"steps": [write]}, {"steps": [{"text": "written"}]}])
    asked: list[FrozenDict] = []

    def allow(request: FrozenDict) -> dict[str, str]:
        asked.append(request)
        return {"behavior": "allow"}

    with Agent(home=home, cwd=home, can_use_tool=allow) as agent:
        assert agent.prompt("write it")["result"] == "written"
        with pytest.raises(ControlError, match="--provider"):
            agent.control("set_model", model="other")
        assert agent.control("mcp_status") == {"mcpServers": ()}
    assert [r["tool_name"] for r in asked] == ["Write"]
    assert target.read_text() == "hi"


def test_without_a_handler_prompts_are_denied(home: Path) -> None:
    target = home / "never.txt"
    write = {"tool_use": {"name": "Write", "input": {"file_path": str(target), "content": "x"}}}
    _scripted(home, [{"steps": [write]}, {"steps": [{"text": "ok"}]}])
    with Agent(home=home, cwd=home) as agent:
        result = agent.prompt("try")
    assert len(result["permission_denials"]) == 1
    assert not target.exists()


def test_interrupt_and_the_same_credential_guard(home: Path) -> None:
    _scripted(home, [{"steps": [{"sleep_ms": 30000}]}], api_key="embedded-secret")
    agent = Agent(home=home, cwd=home)
    agent.send({"type": "user", "message": "wait", "parent_tool_use_id": None})
    while agent.next_record().get("state") != "running":
        pass
    agent.interrupt()
    result = next(r for r in agent.records() if r["type"] == "result")
    assert result["stop_reason"] == "cancelled"
    agent.send({"type": "user", "message": "say embedded-secret", "parent_tool_use_id": None})
    assert agent.close() == 3  # the guard refused the echo of the credential


def test_subprocess_client_offers_the_same_api(home: Path) -> None:
    """DEC-CLI-1: the blocking API over a real agentx process."""
    from agentx.client import Client

    target = home / "c.txt"
    write = {"tool_use": {"name": "Write", "input": {"file_path": str(target), "content": "c"}}}
    _scripted(home, [{"steps": [write]}, {"steps": [{"text": "done"}]}])
    with Client(home=home, cwd=home, can_use_tool=lambda request: {"behavior": "allow"}) as client:
        assert client.init["provider"] == "s"
        assert client.prompt("go")["result"] == "done"
        with pytest.raises(ControlError):
            client.control("set_provider", provider="s")
    assert client.close() == 0
    assert target.read_text() == "c"
