"""``acceptEdits`` runs Bash file commands inside the working directories
unasked, as Claude Code's does, and asks for the rest (DEC-PERM-MODE,
DEC-PERM-PATH), over the real process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agentx_process import (
    AgentxProcess,
    is_can_use_tool,
    is_result,
    scripted_session,
    user,
)


def _bash(command: str) -> dict[str, Any]:
    return {"tool_use": {"name": "Bash", "input": {"command": command}}}


def _deny(request: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": request["request_id"],
            "response": {"behavior": "deny", "message": "no"},
        },
    }


@pytest.fixture
def processes() -> Any:
    made: list[AgentxProcess] = []
    yield made
    for proc in made:
        proc.kill()


def test_file_commands_inside_run_unasked_and_the_rest_asks(
    home: Path, processes: list[AgentxProcess]
) -> None:
    outside = home.parent / "outside"
    outside.mkdir()
    (outside / "keep").write_text("kept")
    # One scripted turn per model request: the call, then the answer after it.
    turns = [
        {"steps": [_bash("mkdir -p a/b && touch a/b/c && cp a/b/c a/d")]},
        {"steps": [{"text": "made"}]},
        {"steps": [_bash(f"rm -rf {outside}")]},
        {"steps": [{"text": "asked"}]},
        {"steps": [_bash("touch a/e > a/f")]},
        {"steps": [{"text": "asked again"}]},
    ]
    proc = scripted_session(home, turns, processes, "--permission-mode", "acceptEdits")
    work = home.parent / "work"
    proc.send(user("make"))
    seen = proc.until(is_result)
    assert not any(is_can_use_tool(r) for r in seen)
    assert (work / "a" / "b" / "c").is_file() and (work / "a" / "d").is_file()

    proc.send(user("remove outside"))
    request = proc.until(is_can_use_tool)[-1]
    assert request["request"]["tool_name"] == "Bash"
    proc.send(_deny(request))
    proc.until(is_result)
    assert (outside / "keep").read_text() == "kept"

    proc.send(user("redirect"))
    request = proc.until(is_can_use_tool)[-1]
    proc.send(_deny(request))
    proc.until(is_result)
    assert not (work / "a" / "e").exists() and not (work / "a" / "f").exists()
    proc.close_stdin()
    assert proc.wait() == 0, proc.stderr()
