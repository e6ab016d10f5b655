"""End-to-end: a replaced input is checked against every deny rule before it
runs (DEC-SET-1, DEC-PERM-MODE, WIRE-PERM-042).

The scripted model asks for something harmless; the host allows it with an
``updatedInput`` that is not. A fake ``curl`` first on the session's ``PATH``
writes a marker when it runs; the deny rule is all that stands in its way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    Record,
    is_can_use_tool,
    is_result,
    user,
    write_auth,
    write_script,
)

pytestmark = pytest.mark.e2e


def _allow_with(request: Record, updated: dict[str, Any]) -> Record:
    return {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": request["request_id"],
            "response": {"behavior": "allow", "updatedInput": updated},
        },
    }


def _session(
    home: Path,
    tmp_path: Path,
    processes: list[AgentxProcess],
    *,
    tool: str,
    tool_input: dict[str, Any],
    settings: dict[str, Any],
) -> AgentxProcess:
    steps = [{"tool_use": {"name": tool, "input": tool_input}}]
    script = write_script(home / "script.json", [{"steps": steps}, {"steps": [{"text": "ok"}]}])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    proc = AgentxProcess((*DUPLEX, "--settings", json.dumps(settings)), home=home, cwd=work)
    processes.append(proc)
    return proc


def _tool_result(records: list[Record]) -> dict[str, Any]:
    blocks = [
        block
        for r in records
        if r.get("type") == "user"
        for block in r["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    assert len(blocks) == 1
    return blocks[0]


@pytest.mark.parametrize(
    "command", ["curl x", "taskset -c 0 curl x", "echo ok; curl x", "echo curl x | sh"]
)
@pytest.mark.parametrize("denied", [True, False], ids=["deny-rule", "no-rule"])
def test_a_host_allow_with_an_updated_command_cannot_run_a_denied_program(
    home: Path, tmp_path: Path, processes: list[AgentxProcess], command: str, denied: bool
) -> None:
    fake = tmp_path / "fakebin"
    fake.mkdir()
    marker = tmp_path / "curl-ran"
    (fake / "curl").write_text(f'#!/bin/sh\necho "$@" >> {marker}\n')
    (fake / "curl").chmod(0o755)
    settings: dict[str, Any] = {"env": {"PATH": f"{fake}:/usr/bin:/bin"}}
    if denied:
        settings["permissions"] = {"deny": ["Bash(curl:*)"]}
    proc = _session(
        home,
        tmp_path,
        processes,
        tool="Bash",
        tool_input={"command": "echo harmless"},
        settings=settings,
    )
    proc.send(user("go"))
    request = proc.until(is_can_use_tool)[-1]
    assert request["request"]["input"] == {"command": "echo harmless"}
    proc.send(_allow_with(request, {"command": command}))
    records = proc.until(is_result)
    result = _tool_result(records)
    if denied:
        assert result["is_error"] is True
        assert "denied by rule Bash(curl:*)" in json.dumps(result)
        assert not marker.exists()
        assert records[-1]["permission_denials"] == [
            {
                "tool_name": "Bash",
                "tool_use_id": request["request"]["tool_use_id"],
                "tool_input": {"command": command},
            }
        ]
    else:  # the same answer does run curl: the rule is what stops it
        assert marker.read_text() == "x\n"
    assert records[-1]["subtype"] == "success"
    proc.close_stdin()
    assert proc.wait() == 0


def test_a_host_allow_with_an_updated_path_cannot_read_a_denied_file(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "public.txt").write_text("public\n")
    (work / "secret.txt").write_text("SECRET-8e1d\n")
    settings = {"permissions": {"ask": ["Read(public.txt)"], "deny": ["Read(secret.txt)"]}}
    proc = _session(
        home,
        tmp_path,
        processes,
        tool="Read",
        tool_input={"file_path": str(work / "public.txt")},
        settings=settings,
    )
    proc.send(user("go"))
    request = proc.until(is_can_use_tool)[-1]
    proc.send(_allow_with(request, {"file_path": str(work / "secret.txt")}))
    records = proc.until(is_result)
    result = _tool_result(records)
    assert result["is_error"] is True
    assert "denied by rule Read(secret.txt)" in json.dumps(result)
    assert "SECRET-8e1d" not in json.dumps(records)
    proc.close_stdin()
    assert proc.wait() == 0
