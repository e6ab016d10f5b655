"""The hook runner with real shell commands (DEC-HOOK-2..4)."""

from __future__ import annotations

import json
import os
import select
import threading
from pathlib import Path
from typing import Any

import pytest

from agentx.permissions.hooks import (
    MAX_HOOK_OUTPUT_BYTES,
    HookOutcome,
    HookOutput,
    hook_env,
    hook_progress_record,
    hook_response_record,
    hook_started_record,
    parse_outcome,
    permission_request_input,
    start_hook,
)
from agentx.tools.process import ChildProcesses

CHILDREN = ChildProcesses()
ENV = hook_env({"SESSION_VAR": "s"}, os.environ)
INPUT = permission_request_input(
    session_id="sess-1",
    cwd=Path("/tmp"),
    tool_name="Bash",
    tool_input={"command": "ls"},
    tool_use_id="toolu_1",
)


def _run(command: str, tmp_path: Path, timeout_s: float = 10) -> HookOutcome:
    proc = start_hook(command, INPUT, cwd=tmp_path, env=ENV, timeout_s=timeout_s, children=CHILDREN)
    outcome = proc.wait(30)
    assert outcome is not None
    return outcome


def _terminated(pid: int) -> bool:
    """Whether ``pid`` has terminated within 5 s, observed through its pidfd."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], 5)[0])
    finally:
        os.close(fd)


OUTCOMES = [
    pytest.param("true", "passthrough", None, None, id="empty-stdout"),
    pytest.param(
        'echo \'{"decision":"passthrough"}\'', "passthrough", None, None, id="explicit-passthrough"
    ),
    pytest.param('echo \'{"decision":"allow"}\'', "allow", None, None, id="allow"),
    pytest.param(
        'echo \'{"decision":"allow","updatedInput":{"command":"ls -a"}}\'',
        "allow",
        None,
        {"command": "ls -a"},
        id="allow-updated-input",
    ),
    pytest.param(
        'echo \'{"decision":"deny","reason":"no"}\'', "deny", "no", None, id="deny-reason"
    ),
    pytest.param(
        'echo \'{"decision":"deny"}\'', "deny", "denied by hook", None, id="deny-default-reason"
    ),
    pytest.param("echo blocked >&2; exit 2", "deny", "blocked", None, id="exit-2"),
    pytest.param("exit 1", "error", "hook exited with status 1", None, id="exit-1"),
    pytest.param("echo garbage", "error", "hook stdout: invalid JSON", None, id="garbage"),
    pytest.param(
        'echo \'{"decision":"allow","decision":"deny"}\'',
        "error",
        "hook stdout: ambiguous JSON: duplicate member name",
        None,
        id="duplicate",
    ),
    pytest.param("echo '[1]'", "error", "hook stdout is not a JSON object", None, id="array"),
    pytest.param(
        'echo \'{"decision":"ask"}\'', "error", "not a valid decision", None, id="ask-is-invalid"
    ),
    pytest.param(
        'echo \'{"decision":"allow","extra":1}\'',
        "error",
        "not a valid decision",
        None,
        id="extra-member",
    ),
    pytest.param(
        'echo \'{"decision":"allow","updatedInput":[]}\'',
        "error",
        "not a valid decision",
        None,
        id="bad-updated-input",
    ),
    pytest.param(
        'echo \'{"decision":"deny","reason":5}\'',
        "error",
        "not a valid decision",
        None,
        id="bad-reason",
    ),
    pytest.param("kill -9 $$", "error", "hook exited with status -9", None, id="killed-itself"),
]


@pytest.mark.parametrize(("command", "decision", "reason", "updated"), OUTCOMES)
def test_outcomes(
    tmp_path: Path, command: str, decision: str, reason: str | None, updated: Any
) -> None:
    outcome = _run(command, tmp_path)
    assert outcome.decision == decision
    if reason is not None:
        assert outcome.reason is not None and reason in outcome.reason
    assert outcome.updated_input == updated
    assert outcome.decisive is (decision in ("allow", "deny"))


def test_stdin_env_and_cwd(tmp_path: Path) -> None:
    outcome = _run(
        'cat > input.json; printf "%s|%s|%s" "$SESSION_VAR" "$(pwd)" "${OPENAI_API_KEY-unset}"',
        tmp_path,
    )
    assert json.loads((tmp_path / "input.json").read_text()) == {
        "hook_event_name": "PermissionRequest",
        "session_id": "sess-1",
        "cwd": "/tmp",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_1",
    }
    assert outcome.stdout == f"s|{tmp_path}|unset"


def test_hook_env_is_clean() -> None:
    env = hook_env({"A": "1", "PATH": "/session/bin"}, {"PATH": "/bin", "SECRET_KEY": "x"})
    assert env == {"A": "1", "PATH": "/session/bin"}


def test_large_stdin_ignored_by_hook_does_not_block(tmp_path: Path) -> None:
    big = permission_request_input(
        session_id="s",
        cwd=tmp_path,
        tool_name="Write",
        tool_input={"content": "x" * (4 * 1024 * 1024)},
        tool_use_id="t",
    )
    proc = start_hook(
        'echo \'{"decision":"allow"}\'', big, cwd=tmp_path, env=ENV, timeout_s=10, children=CHILDREN
    )
    outcome = proc.wait(30)
    assert outcome is not None and outcome.decision == "allow"


def test_hang_times_out_as_error_and_kills_group(tmp_path: Path) -> None:
    proc = start_hook(
        "sleep 30 & echo $! > bg.pid; wait",
        INPUT,
        cwd=tmp_path,
        env=ENV,
        timeout_s=0.3,
        children=CHILDREN,
    )
    outcome = proc.wait(30)
    assert outcome is not None
    assert (outcome.decision, outcome.reason) == ("error", "hook timed out after 0.3 s")
    assert outcome.timed_out is True
    assert outcome.response_outcome == "error"
    assert _terminated(int((tmp_path / "bg.pid").read_text()))
    assert _terminated(proc.pid)


def test_kill_cancels_and_leaves_no_zombie(tmp_path: Path) -> None:
    proc = start_hook(
        "echo started; exec sleep 30", INPUT, cwd=tmp_path, env=ENV, timeout_s=60, children=CHILDREN
    )
    progress: list[HookOutput] = []
    while not progress:
        progress.extend(proc.read_output(5))
    assert progress == [HookOutput(stdout="started\n")]
    killer = threading.Thread(target=proc.kill)
    killer.start()
    killer.join()
    outcome = proc.wait(10)
    assert outcome is not None
    assert (outcome.decision, outcome.response_outcome) == ("cancelled", "cancelled")
    assert outcome.stdout == "started\n"
    with pytest.raises(ChildProcessError):
        os.waitpid(proc.pid, os.WNOHANG)  # reaped: no zombie left behind
    proc.kill()  # after reaping: a no-op


def test_wait_returns_none_while_running(tmp_path: Path) -> None:
    proc = start_hook(
        "exec sleep 30", INPUT, cwd=tmp_path, env=ENV, timeout_s=60, children=CHILDREN
    )
    assert proc.wait(0.05) is None
    proc.kill()
    outcome = proc.wait(10)
    assert outcome is not None and outcome.decision == "cancelled"


def test_progress_streams_incrementally(tmp_path: Path) -> None:
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    proc = start_hook(
        f"printf 'é' | head -c 1; echo warn >&2; cat {fifo} > /dev/null; printf '\\251'",
        INPUT,
        cwd=tmp_path,
        env=ENV,
        timeout_s=30,
        children=CHILDREN,
    )
    seen: list[HookOutput] = []
    while not any(o.stderr for o in seen):
        seen.extend(proc.read_output(5))
    # The first byte of "é" is held back until its second byte arrives.
    assert seen == [HookOutput(stderr="warn\n")]
    with fifo.open("w") as release:
        release.write("go")
    while proc.outcome is None:
        seen.extend(proc.read_output(5))
    assert "".join(o.stdout for o in seen) == "é"
    assert proc.outcome.stdout == "é"


@pytest.mark.parametrize(
    ("size", "decision"),
    [(MAX_HOOK_OUTPUT_BYTES, "passthrough"), (MAX_HOOK_OUTPUT_BYTES + 1, "error")],
    ids=["at-limit", "one-past"],
)
def test_stdout_limit(tmp_path: Path, size: int, decision: str) -> None:
    outcome = _run(f"head -c {size - 1} /dev/zero | tr '\\0' ' '; echo", tmp_path)
    assert outcome.decision == decision
    assert len(outcome.stdout) == MAX_HOOK_OUTPUT_BYTES if decision == "error" else size


def test_parse_outcome_non_utf8_is_error() -> None:
    assert parse_outcome(0, b"\xff", b"").decision == "error"


def test_records() -> None:
    ids = {
        "hook_id": "h1",
        "hook_name": "PermissionRequest:Bash",
        "hook_event": "PermissionRequest",
        "session_id": "s",
        "uuid": "u",
    }
    assert hook_started_record(**ids) == {
        "type": "system",
        "subtype": "hook_started",
        "hook_id": "h1",
        "hook_name": "PermissionRequest:Bash",
        "hook_event": "PermissionRequest",
        "uuid": "u",
        "session_id": "s",
    }
    progress = hook_progress_record(HookOutput(stdout="a", stderr="b"), **ids)
    assert (progress["subtype"], progress["stdout"], progress["stderr"], progress["output"]) == (
        "hook_progress",
        "a",
        "b",
        "ab",
    )
    done = hook_response_record(
        HookOutcome(decision="deny", reason="r", exit_code=2, stderr="r"), **ids
    )
    assert (done["outcome"], done["exit_code"], done["output"]) == ("success", 2, "r")
    cancelled = hook_response_record(HookOutcome(decision="cancelled"), **ids)
    assert cancelled["outcome"] == "cancelled" and "exit_code" not in cancelled
    assert hook_response_record(HookOutcome(decision="error"), **ids)["outcome"] == "error"
