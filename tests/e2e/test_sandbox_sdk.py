"""The stock Python SDK's ``sandbox`` option reaches agentx (DEC-PERM-BASH-5):
``ClaudeAgentOptions(sandbox={"enabled": True})`` is merged into ``--settings``
by the SDK, and ``system/init`` reports the tier that confines Bash."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is a dev extra")

AGENTX = str(Path(sys.executable).with_name("agentx"))


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (.ci/run installs it)")
def test_the_sdk_sandbox_option_confines_bash(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside.txt"
    step = {"tool_use": {"name": "Bash", "input": {"command": f"echo x > {outside}; echo rc=$?"}}}
    (home / "s.json").write_text(json.dumps({"version": 1, "turns": [{"steps": [step]}]}))
    provider = {"id": "s", "type": "scripted", "model": "m", "script": str(home / "s.json")}
    (home / "auth.json").write_text(json.dumps({"version": 2, "providers": [provider]}))
    options = sdk.ClaudeAgentOptions(
        cli_path=AGENTX,
        cwd=str(work),
        env={"AGENTX_HOME": str(home)},
        sandbox={"enabled": True},
        permission_mode="bypassPermissions",
    )

    async def run() -> list[Any]:
        return [m async for m in sdk.query(prompt="write outside", options=options)]

    messages = anyio.run(run)
    init = messages[0]
    assert init.subtype == "init"
    assert init.data["sandbox"] == {
        "enabled": True,
        "tier": "namespaces",
        "network": "off",
        "reason": None,
    }
    results = [
        block.content
        for m in messages
        if type(m).__name__ == "UserMessage" and isinstance(m.content, list)
        for block in m.content
        if type(block).__name__ == "ToolResultBlock"
    ]
    assert results and "rc=1" in str(results[0])
    assert not outside.exists()
