"""Subagents under the stock TypeScript Agent SDK (0.3.334): the ``agents``
option (and ``forwardSubagentText``) reach agentx in ``initialize``; the
program runs unchanged against the loopback model (DEC-PROFILE-2,
DEC-TURN-3). ``tests/e2e/ts_sdk/agents.mjs`` is the program."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.e2e.agentx_process import agentx_command, write_auth
from tests.e2e.test_ts_sdk import DRIVER_DIR, _node
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
)


def test_agents_the_ts_sdk_way(tmp_path: Path) -> None:
    node = _node()
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
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTX_", "CLAUDE_"))}
    with ProviderServer(replies) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "model-x",
                    "endpoint": server.url,
                    "api_key": "sk-ts-agents-sentinel",
                }
            ],
        )
        done = subprocess.run(
            [node, "agents.mjs", agentx_command()[0], str(home), str(work)],
            cwd=DRIVER_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        requests = [r.body for r in server.requests]
    steps = {line["step"]: line for line in map(json.loads, done.stdout.splitlines())}
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
