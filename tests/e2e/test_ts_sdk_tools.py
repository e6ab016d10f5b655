"""``AskUserQuestion`` and ``NotebookEdit`` under the stock TypeScript Agent
SDK (WIRE-PERM-042, DEC-PERM-MODE, DEC-PERM-PATH):
``tests/e2e/ts_sdk/tools.mjs`` answers the questions in ``canUseTool`` the
SDK's way (an allow whose ``updatedInput`` carries ``answers``) and edits a
notebook under ``acceptEdits`` without being asked."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.e2e.agentx_process import agentx_command, write_auth
from tests.e2e.test_agent_tools import QUESTIONS, _notebook, _text, _tool_result
from tests.e2e.test_ts_sdk import DRIVER_DIR, _node
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
)

KEY = "sk-ts-tools-sentinel"


def test_tools_the_ts_sdk_way(tmp_path: Path) -> None:
    node = _node()
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    notebook = work / "n.ipynb"
    notebook.write_text(json.dumps(_notebook()))
    edit = {"notebook_path": str(notebook), "cell_id": "c1", "new_source": "# ts"}
    replies = [
        Reply(chunks=anthropic_tool_use("AskUserQuestion", QUESTIONS)),
        Reply(chunks=anthropic_text_stream("arrow then")),  # ask
        Reply(chunks=anthropic_tool_use("NotebookEdit", edit)),
        Reply(chunks=anthropic_text_stream("edited")),  # notebook
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
                    "api_key": KEY,
                }
            ],
        )
        done = subprocess.run(
            [node, "tools.mjs", agentx_command()[0], str(home), str(work)],
            cwd=DRIVER_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        requests = list(server.requests)
    steps = {line["step"]: line for line in map(json.loads, done.stdout.splitlines())}
    assert done.returncode == 0 and "done" in steps, (steps.get("failed"), done.stderr[-2000:])
    assert len(requests) == 4

    ask = steps["ask"]
    assert ask["result"] == "arrow then"
    assert ask["asked"] == [{"toolName": "AskUserQuestion", "input": QUESTIONS}]
    assert {"AskUserQuestion", "NotebookEdit", "TaskStop"} <= set(ask["tools"])
    answered = _tool_result(requests[1])
    assert not answered.get("is_error") and '"Which library?" = "arrow"' in _text(answered)

    edited = steps["notebook"]
    assert edited["result"] == "edited" and edited["asked"] == []
    assert "Updated cell c1" in _text(_tool_result(requests[3]))
    assert json.loads(notebook.read_text())["cells"][0]["source"] == "# ts"
