"""``AskUserQuestion`` and ``NotebookEdit`` under the stock TypeScript Agent
SDK (WIRE-PERM-042, DEC-PERM-MODE, DEC-PERM-PATH):
``tests/e2e/ts_sdk/tools.mjs`` answers the questions in ``canUseTool`` the
SDK's way (an allow whose ``updatedInput`` carries ``answers``) and edits a
notebook under ``acceptEdits`` without being asked."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.test_agent_tools import QUESTIONS, _notebook, _text, _tool_result
from tests.e2e.test_ts_sdk import run_driver
from tests.fakes.provider_server import (
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
)

KEY = "sk-ts-tools-sentinel"


def test_tools_the_ts_sdk_way(tmp_path: Path) -> None:
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
    steps, done, requests = run_driver("tools.mjs", replies, home, work, api_key=KEY)
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
