"""``NotebookEdit``, ``TaskStop`` and ``AskUserQuestion`` end to end under
the stock Python Agent SDK against the loopback model (DEC-TURN-3,
DEC-PERM-PATH, DEC-PERM-MODE, DEC-PROFILE-1 ``stop_task``, WIRE-PERM-042):
each asserts the tools the model was offered, the ``tool_result`` it read
and what the SDK saw; the hostile cases leave files untouched and never
reach the host's ``can_use_tool``."""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agentx_process import write_anthropic_auth
from tests.e2e.python_sdk import AGENTX, offered_tools, result_of, run_query
from tests.fakes.provider_server import (
    ProviderServer,
    RecordedRequest,
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
)

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is a dev extra")

KEY = "sk-agent-tools-sentinel"


_run = functools.partial(run_query, api_key=KEY)


def _tool_result(request: RecordedRequest) -> dict[str, Any]:
    """The last tool_result block the model was sent."""
    blocks = [
        block
        for message in request.body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    return blocks[-1]


def _text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def _notebook() -> dict[str, Any]:
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [{"cell_type": "markdown", "id": "c1", "metadata": {}, "source": "# old"}],
    }


# --- NotebookEdit ----------------------------------------------------------------


def test_notebook_edit_under_accept_edits(tmp_path: Path) -> None:
    """acceptEdits allows it as it allows Edit; the file is edited through
    the Write/Edit write path and the model reads what changed."""
    work = tmp_path / "work"
    work.mkdir()
    path = work / "n.ipynb"
    path.write_text(json.dumps(_notebook()))
    edit = {"notebook_path": str(path), "cell_id": "c1", "new_source": "# new"}
    replies = [
        Reply(chunks=anthropic_tool_use("NotebookEdit", edit)),
        Reply(chunks=anthropic_text_stream("edited")),
    ]
    messages, requests = _run(tmp_path, replies, permission_mode="acceptEdits")
    assert result_of(messages).result == "edited"
    assert "NotebookEdit" in offered_tools(requests[0])
    assert "NotebookEdit" in json.dumps(requests[0].body["system"])  # its guidance
    block = _tool_result(requests[1])
    assert not block.get("is_error") and "Updated cell c1" in _text(block)
    assert json.loads(path.read_text())["cells"][0]["source"] == "# new"


def test_notebook_edit_hostile_files(tmp_path: Path) -> None:
    """Not JSON, a link to a denied notebook: tool errors, nothing written,
    the host never asked."""
    work = tmp_path / "work"
    (work / "secret").mkdir(parents=True)
    garbage = work / "bad.ipynb"
    garbage.write_text("{not json")
    secret = work / "secret" / "s.ipynb"
    secret.write_text(json.dumps(_notebook()))
    (work / "link.ipynb").symlink_to(secret)
    asked: list[str] = []

    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(tool)
        return sdk.PermissionResultAllow()

    bad = {"notebook_path": str(garbage), "cell_id": "c1", "new_source": "x"}
    linked = {"notebook_path": str(work / "link.ipynb"), "cell_id": "c1", "new_source": "x"}
    replies = [
        Reply(chunks=anthropic_tool_use("NotebookEdit", bad)),
        Reply(chunks=anthropic_tool_use("NotebookEdit", linked, "toolu_2")),
        Reply(chunks=anthropic_text_stream("done")),
    ]
    messages, requests = _run(
        tmp_path,
        replies,
        permission_mode="acceptEdits",
        disallowed_tools=["Edit(./secret/**)"],
        can_use_tool=can_use_tool,
    )
    assert result_of(messages).result == "done"
    first, second = _tool_result(requests[1]), _tool_result(requests[2])
    assert first["is_error"] and "not valid JSON" in _text(first)
    assert second["is_error"] and "denied by rule Edit(./secret/**)" in _text(second)
    assert garbage.read_text() == "{not json"
    assert json.loads(secret.read_text()) == _notebook()
    assert asked == []


# --- TaskStop --------------------------------------------------------------------


def _stop_the_started_task(request: RecordedRequest) -> tuple[bytes, ...]:
    """The model stops the task whose id the Bash result named."""
    text = _text(_tool_result(request))
    task_id = text.split("ID: ", 1)[1].split(".", 1)[0]
    return anthropic_tool_use("TaskStop", {"task_id": task_id}, "toolu_2")


def test_task_stop_stops_a_background_bash(tmp_path: Path) -> None:
    replies = [
        Reply(
            chunks=anthropic_tool_use(
                "Bash", {"command": "sleep 300", "run_in_background": True, "description": "nap"}
            )
        ),
        Reply(respond=_stop_the_started_task),
        Reply(chunks=anthropic_tool_use("KillShell", {"shell_id": "task_nope"}, "toolu_3")),
        Reply(chunks=anthropic_text_stream("stopped")),
    ]
    messages, requests = _run(tmp_path, replies, allowed_tools=["Bash"])
    assert result_of(messages).result == "stopped"
    assert "TaskStop" in offered_tools(requests[0]) and "KillShell" not in offered_tools(
        requests[0]
    )
    stopped = json.loads(_text(_tool_result(requests[2])))
    assert stopped["message"].startswith("Successfully stopped task: task_")
    assert stopped["task_type"] == "local_bash" and stopped["command"] == "nap"
    notes = [m for m in messages if type(m).__name__ == "TaskNotificationMessage"]
    assert [n.data["status"] for n in notes] == ["stopped"]
    assert notes[0].data["task_id"] == stopped["task_id"]
    unknown = _tool_result(requests[3])  # by its old name, an id never started
    assert unknown["is_error"] and "no background task with id 'task_nope'" in _text(unknown)


# --- AskUserQuestion ---------------------------------------------------------------

QUESTIONS = {
    "questions": [
        {
            "question": "Which library?",
            "header": "Library",
            "options": [
                {"label": "dateutil", "description": "the classic"},
                {"label": "arrow", "description": "friendlier"},
            ],
            "multiSelect": False,
        }
    ]
}


def test_ask_user_question_answered_through_can_use_tool(tmp_path: Path) -> None:
    """The SDK's way: the allow's updatedInput carries ``answers``; asked
    even in bypassPermissions."""
    seen: list[dict[str, Any]] = []

    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        seen.append({"tool": tool, "input": tool_input})
        answers = {"Which library?": "arrow"}
        return sdk.PermissionResultAllow(updated_input={**tool_input, "answers": answers})

    replies = [
        Reply(chunks=anthropic_tool_use("AskUserQuestion", QUESTIONS)),
        Reply(chunks=anthropic_text_stream("arrow it is")),
    ]
    messages, requests = _run(
        tmp_path, replies, permission_mode="bypassPermissions", can_use_tool=can_use_tool
    )
    assert result_of(messages).result == "arrow it is"
    assert "AskUserQuestion" in offered_tools(requests[0])
    assert seen == [{"tool": "AskUserQuestion", "input": QUESTIONS}]
    block = _tool_result(requests[1])
    assert not block.get("is_error")
    assert '"Which library?" = "arrow"' in _text(block)


def test_ask_user_question_with_1000_options_is_never_asked(tmp_path: Path) -> None:
    asked: list[str] = []

    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(tool)
        return sdk.PermissionResultAllow()

    many = {
        "questions": [
            {
                **QUESTIONS["questions"][0],
                "options": [{"label": f"o{i}", "description": ""} for i in range(1000)],
            }
        ]
    }
    replies = [
        Reply(chunks=anthropic_tool_use("AskUserQuestion", many)),
        Reply(chunks=anthropic_text_stream("ok")),
    ]
    messages, requests = _run(tmp_path, replies, can_use_tool=can_use_tool)
    assert asked == []
    block = _tool_result(requests[1])
    assert block["is_error"] and "2 to 4 options, not 1000" in _text(block)
    assert [d["tool_name"] for d in result_of(messages).permission_denials] == ["AskUserQuestion"]


def test_ask_user_question_without_a_permission_channel_fails_at_once(tmp_path: Path) -> None:
    """Text ``-p`` has nobody to answer: a clear denial, never a hang."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    replies = [
        Reply(chunks=anthropic_tool_use("AskUserQuestion", QUESTIONS)),
        Reply(chunks=anthropic_text_stream("went on without it")),
    ]
    with ProviderServer(replies) as server:
        write_anthropic_auth(home, server.url, KEY)
        done = subprocess.run(
            [AGENTX, "-p", "go"],
            cwd=work,
            env={"AGENTX_HOME": str(home), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            timeout=60,
            check=False,
        )
        requests = list(server.requests)
    assert done.stdout.decode().strip() == "went on without it"
    block = _tool_result(requests[1])
    assert block["is_error"] and "no permission channel is open" in _text(block)
    assert b"only the user can answer it" in done.stderr


# --- Skill -------------------------------------------------------------------------


def _skill(root: Path, folder: str, name: str, description: str, body: str) -> Path:
    path = root / ".claude" / "skills" / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n")
    return path


def test_skills_option_lists_and_runs_the_named_skill(tmp_path: Path) -> None:
    """The Python SDK's ``skills`` option: ``initialize``'s allowlist and a
    ``Skill(name)`` allow rule; the listed skill's body reaches the model,
    the other skill and a link out of the boundary are never offered."""
    work = tmp_path / "work"
    _skill(work, "greet", "greet", "Greets the user warmly.", "Say hello in French.")
    _skill(work, "deploy", "deploy", "Deploys the app.", "Run the deploy.")
    outside = tmp_path / "outside" / "SKILL.md"
    outside.parent.mkdir()
    outside.write_text("---\nname: leak\ndescription: outside secret\n---\nleaked\n")
    (work / ".claude" / "skills" / "leak").mkdir()
    (work / ".claude" / "skills" / "leak" / "SKILL.md").symlink_to(outside)
    asked: list[str] = []
    stderr: list[str] = []

    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(tool)
        return sdk.PermissionResultDeny(message="no")

    replies = [
        Reply(chunks=anthropic_tool_use("Skill", {"skill": "greet"})),
        Reply(chunks=anthropic_text_stream("bonjour")),
    ]
    messages, requests = _run(
        tmp_path, replies, skills=["greet"], can_use_tool=can_use_tool, stderr=stderr.append
    )
    assert result_of(messages).result == "bonjour"
    (offered,) = [t for t in requests[0].body["tools"] if t["name"] == "Skill"]
    assert "- greet: Greets the user warmly." in offered["description"]
    assert "deploy" not in offered["description"] and "outside secret" not in json.dumps(
        requests[0].body
    )
    assert "Skill" in json.dumps(requests[0].body["system"])  # its guidance
    block = _tool_result(requests[1])
    assert not block.get("is_error") and "Say hello in French." in _text(block)
    assert asked == []  # the Skill(greet) rule the SDK added allows it
    warned = [line for line in stderr if "leads out of" in line]
    assert len(warned) == 1 and "leak/SKILL.md" in warned[0]


# --- Background task output --------------------------------------------------------


def _output_file(request: RecordedRequest) -> str:
    """The output file the background Bash result named (in any tool_result
    the model was sent so far)."""
    marker = "Output is being written to: "
    for message in request.body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block.get("type") == "tool_result" and marker in _text(block):
                return _text(block).split(marker, 1)[1].strip()
    raise AssertionError("no background Bash result")


def _wait_for_line(request: RecordedRequest) -> tuple[bytes, ...]:
    """Wait (bounded) until the task's line is in its file."""
    wait = f"timeout 20 sh -c 'until grep -q sentinel {_output_file(request)}; do :; done'"
    return anthropic_tool_use("Bash", {"command": wait}, "toolu_2")


def test_the_model_reads_its_background_task_output_unasked(tmp_path: Path) -> None:
    """DEC-TURN-3: the model reads the output file a background Bash names
    with Read, unasked, as Claude Code's does (the SDK here has no
    ``can_use_tool``: an ask would be a denial); the task folder is read
    only: a Write there still needs a permission nobody gives, and the rest
    of the agentx home (auth.json) stays outside the boundary."""
    home = tmp_path / "home"
    start = {"command": "echo task-out-sentinel", "run_in_background": True}
    replies = [
        Reply(chunks=anthropic_tool_use("Bash", start)),
        Reply(respond=_wait_for_line),
        Reply(
            respond=lambda r: anthropic_tool_use("Read", {"file_path": _output_file(r)}, "toolu_3")
        ),
        Reply(
            respond=lambda r: anthropic_tool_use(
                "Write",
                {"file_path": str(Path(_output_file(r)).with_name("x")), "content": "x"},
                "toolu_4",
            )
        ),
        Reply(chunks=anthropic_tool_use("Read", {"file_path": str(home / "auth.json")}, "toolu_5")),
        Reply(chunks=anthropic_text_stream("read")),
    ]
    messages, requests = _run(tmp_path, replies, allowed_tools=["Bash"])
    assert result_of(messages).result == "read"
    read = _tool_result(requests[3])
    assert not read.get("is_error") and "task-out-sentinel" in _text(read)
    write = _tool_result(requests[4])
    assert write["is_error"]
    assert not Path(_output_file(requests[4])).with_name("x").exists()
    auth = _tool_result(requests[5])
    assert auth["is_error"] and KEY not in _text(auth)
