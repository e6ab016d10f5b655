"""Claude Code's options the stock TypeScript Agent SDK's way (DEC-PROFILE-2,
DEC-CLI-5, DEC-PERM-MODE): ``tests/e2e/ts_sdk/options.mjs`` runs one
``query()`` per option against the loopback model; each case asserts the
request the model received and what the SDK reported."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.test_sdk_options import _tool_call
from tests.e2e.test_ts_sdk import run_driver
from tests.fakes.provider_server import Reply, anthropic_text_stream

KEY = "sk-ts-options-sentinel"


def test_options_the_ts_sdk_way(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    written = work / "w.txt"
    replies = [
        Reply(chunks=anthropic_text_stream("a plan")),  # plan
        Reply(chunks=anthropic_text_stream("ok")),  # disallowed
        Reply(chunks=_tool_call("Bash", {"command": "echo hi there"})),  # allowed
        Reply(chunks=anthropic_text_stream("done")),
        Reply(chunks=_tool_call("Write", {"file_path": str(work / "no.txt"), "content": "x"})),
        Reply(chunks=anthropic_text_stream("denied then")),  # dont_ask
        Reply(chunks=_tool_call("Write", {"file_path": str(written), "content": "live"})),
        Reply(chunks=anthropic_text_stream("written")),  # live_mode
    ]
    steps, done, requests = run_driver("options.mjs", replies, home, work, api_key=KEY)
    assert done.returncode == 0 and "done" in steps, (steps.get("failed"), done.stderr[-2000:])
    assert len(requests) == 8

    plan = steps["plan"]
    assert plan["profile"] == "sdk" and plan["permissionMode"] == "plan"
    assert plan["result"] == "a plan"
    assert "Plan mode is active" in json.dumps(requests[0].body["system"])

    disallowed = steps["disallowed"]
    offered = [t["name"] for t in requests[1].body["tools"]]
    assert not {"Bash", "Edit", "Write"} & set(offered) and "Read" in offered
    assert "Bash" not in disallowed["tools"]

    allowed = steps["allowed"]
    assert allowed["result"] == "done" and allowed["asked"] == []
    assert "hi there" in json.dumps(requests[3].body["messages"])

    dont_ask = steps["dont_ask"]
    assert dont_ask["asked"] == [] and dont_ask["denials"] == ["Write"]
    assert not (work / "no.txt").exists()

    live = steps["live_mode"]
    assert live["result"] == "written" and live["asked"] == []
    assert written.read_text() == "live"
    assert KEY not in done.stdout and KEY not in done.stderr
