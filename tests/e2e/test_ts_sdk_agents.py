"""Subagents under the stock TypeScript Agent SDK (0.3.334): the ``agents``
option (and ``forwardSubagentText``) reach agentx in ``initialize``; the
program runs unchanged against the loopback model (DEC-PROFILE-2,
DEC-TURN-3). ``tests/e2e/ts_sdk/agents.mjs`` is the program."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.test_ts_sdk import run_driver
from tests.fakes.provider_server import (
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
)


def test_agents_the_ts_sdk_way(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (work / "a.txt").write_text("hello\n")
    call = {"description": "Review", "prompt": "Look at a.txt", "subagent_type": "reviewer"}
    replies = [
        Reply(chunks=anthropic_tool_use("Agent", call, "toolu_agent")),
        Reply(chunks=anthropic_tool_use("Read", {"file_path": "a.txt"}, "toolu_read")),
        Reply(chunks=anthropic_text_stream("it says hello")),
        Reply(chunks=anthropic_text_stream("reviewed")),
    ]
    steps, done, recorded = run_driver(
        "agents.mjs", replies, home, work, api_key="sk-ts-agents-sentinel"
    )
    requests = [r.body for r in recorded]
    assert done.returncode == 0 and "done" in steps, (steps.get("failed"), done.stderr[-2000:])
    assert len(requests) == 4
    system = requests[1]["system"]
    text = system if isinstance(system, str) else "".join(b["text"] for b in system)
    assert text.startswith("You are the TS reviewer.")
    assert [t["name"] for t in requests[1]["tools"]] == ["Read"]
    agents = steps["agents"]
    assert agents["subtype"] == "success" and agents["result"] == "reviewed"
    # forwardSubagentText: the subagent's text answer is forwarded too.
    assert agents["nested"] == [
        {"type": "assistant", "parent": "toolu_agent"},
        {"type": "user", "parent": "toolu_agent"},
        {"type": "assistant", "parent": "toolu_agent"},
    ]
    assert {"subtype": "task_started", "task_type": "local_agent"} in [
        {k: v for k, v in t.items() if k != "status"} for t in agents["tasks"]
    ]
    assert {"subtype": "task_notification", "status": "completed"} in [
        {k: v for k, v in t.items() if k != "task_type"} for t in agents["tasks"]
    ]
