"""End-to-end: one path policy for the file tools over the real process
(DEC-PERM-PATH). The scripted provider plays the tool calls a hostile
repository would invite: a link to ``/etc/passwd`` and one to an SSH key."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.e2e.agentx_process import (
    AgentxProcess,
    Record,
    is_can_use_tool,
    is_result,
    scripted_session,
    user,
)

PASSWD = os.path.realpath("/etc/passwd")
KEY = "-----BEGIN OPENSSH PRIVATE KEY----- e2e-not-a-real-key"


def _tool(name: str, **tool_input: Any) -> Record:
    return {"tool_use": {"name": name, "input": tool_input}}


def _answer(request: Record, behavior: str) -> Record:
    decision: dict[str, Any] = {"behavior": behavior}
    if behavior == "deny":
        decision["message"] = "no"
    return {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": request["request_id"],
            "response": decision,
        },
    }


def _tool_results(records: list[Record]) -> list[dict[str, Any]]:
    return [
        block
        for r in records
        if r["type"] == "user"
        for block in r["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def _text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else json.dumps(content)


def test_grep_over_a_passwd_link_never_prints_it_and_asks_for_the_link(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """Default mode: Grep over the cwd skips the link and says so; Grep on the
    link asks with blocked_path; the denied ask prints nothing of passwd."""
    work = home.parent / "work"
    work.mkdir()
    (work / "pw").symlink_to("/etc/passwd")
    (work / "notes.txt").write_text("root: of the project\n")
    turns = [
        {
            "steps": [
                _tool("Grep", pattern="root:", output_mode="content"),
                _tool("Glob", pattern="**/*"),
                _tool("Grep", pattern="root:", path="pw", output_mode="content"),
            ]
        },
        {"steps": [{"text": "done"}]},
    ]
    proc = scripted_session(home, turns, processes)
    proc.send(user("search"))
    request = proc.until(is_can_use_tool)[-1]["request"]
    assert request["tool_name"] == "Grep" and request["input"]["path"] == "pw"
    assert request["blocked_path"] == PASSWD
    proc.send(_answer(proc.seen[-1], "deny"))
    records = proc.until(is_result)
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    grep, glob, asked = _tool_results(proc.seen)
    assert f"{work / 'notes.txt'}:1:root: of the project" in _text(grep)
    for block in (grep, glob):
        assert "1 entry not searched: they resolve outside the working directories" in _text(block)
        assert str(work / "pw") in _text(block)
    assert asked["is_error"] is True
    assert records[-1]["subtype"] == "success"
    assert b"root:x:0:0" not in proc.raw and b"/bin/bash" not in proc.raw


def test_a_key_linked_into_the_repository_stays_out_until_approved(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """``x -> ~/.ssh/id_rsa``: Grep and Glob never show it; Read asks with the
    key's path, and only the approved Read returns it."""
    ssh = home.parent / "userhome" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_rsa").write_text(KEY + "\n")
    work = home.parent / "work"
    work.mkdir()
    (work / "x").symlink_to(ssh / "id_rsa")
    (work / "keys").symlink_to(ssh)
    turns = [
        {
            "steps": [
                _tool("Grep", pattern="PRIVATE KEY", output_mode="content"),
                _tool("Glob", pattern="**/*"),
                _tool("Read", file_path="x"),
            ]
        },
        {"steps": [{"text": "done"}]},
    ]
    proc = scripted_session(home, turns, processes)
    proc.send(user("look"))
    before = proc.until(is_can_use_tool)
    assert KEY.encode() not in proc.raw
    assert before[-1]["request"]["blocked_path"] == str((ssh / "id_rsa").resolve())
    proc.send(_answer(before[-1], "allow"))
    proc.until(is_result)
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    grep, glob, read = _tool_results(proc.seen)
    for block in (grep, glob):
        assert KEY not in _text(block) and "2 entries not searched" in _text(block)
    assert KEY in _text(read)


def test_a_read_deny_rule_hides_a_folder_from_grep(
    home: Path, processes: list[AgentxProcess]
) -> None:
    work = home.parent / "work"
    (work / "secrets").mkdir(parents=True)
    (work / "secrets" / "prod.env").write_text("TOKEN=hunter2-e2e\n")
    (work / "app.env").write_text("TOKEN=public\n")
    settings = json.dumps({"permissions": {"deny": ["Read(secrets/**)"]}})
    turns = [
        {
            "steps": [
                _tool("Grep", pattern="TOKEN", output_mode="content"),
                _tool("Grep", pattern="TOKEN", path="secrets", output_mode="content"),
            ]
        },
        {"steps": [{"text": "done"}]},
    ]
    proc = scripted_session(home, turns, processes, "--settings", settings)
    proc.send(user("grep"))
    proc.until(is_result)
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    over, inside = _tool_results(proc.seen)
    assert "TOKEN=public" in _text(over)
    assert "1 entry not searched: denied by permission rules" in _text(over)
    assert inside["is_error"] is True
    assert b"hunter2-e2e" not in proc.raw
    assert not [r for r in proc.seen if is_can_use_tool(r)]
