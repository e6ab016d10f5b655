"""One command hook as a child process group, with real shell commands (DEC-HOOK-2..4)."""

from __future__ import annotations

import json
import os
import select
import threading
from pathlib import Path
from typing import Any

import pytest

from agentx.hooks.process import (
    MAX_HOOK_OUTPUT_BYTES,
    Finished,
    HookOutput,
    hook_env,
    start_hook,
    start_program,
)
from agentx.messages.hooks.events import Common, event_input
from agentx.messages.permission_wire import PermissionAllow, PermissionDeny
from agentx.tools.process import ChildProcesses

CHILDREN = ChildProcesses()
ENV = hook_env({"SESSION_VAR": "s"}, os.environ, project_dir=Path("/project"))
COMMON = Common(
    session_id="sess-1", transcript_path="/t.jsonl", cwd="/tmp", permission_mode="default"
)
INPUT = event_input(
    "PermissionRequest",
    COMMON,
    {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"},
)


def _run(command: str, tmp_path: Path, timeout_s: float = 10) -> Finished:
    proc = start_hook(command, INPUT, cwd=tmp_path, env=ENV, timeout_s=timeout_s, children=CHILDREN)
    finished = proc.wait(30)
    assert finished is not None
    return finished


def _summary(finished: Finished) -> tuple[str, str | None, Any]:
    """(decision, reason, updated input) of a PermissionRequest hook."""
    verdict = finished.verdict
    if verdict.cancelled:
        return ("cancelled", None, None)
    if verdict.failure is not None:
        return ("error", verdict.failure, None)
    if isinstance(verdict.request, PermissionAllow):
        return ("allow", None, verdict.request.updated_input)
    if isinstance(verdict.request, PermissionDeny):
        return ("deny", verdict.request.message, None)
    return ("passthrough", None, None)


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
    pytest.param(
        "echo garbage", "error", "hook stdout is not a JSON object", None, id="plain-text"
    ),
    pytest.param("echo '{garbage'", "error", "hook stdout: invalid JSON", None, id="garbage"),
    pytest.param(
        'echo \'{"decision":"allow","decision":"deny"}\'',
        "error",
        "hook stdout: ambiguous JSON: duplicate member name",
        None,
        id="duplicate",
    ),
    pytest.param("echo '[1]'", "error", "hook stdout is not a JSON object", None, id="array"),
    pytest.param(
        'echo \'{"decision":"ask"}\'', "error", "'ask' is not known", None, id="ask-is-invalid"
    ),
    pytest.param(
        'echo \'{"decision":"allow","extra":1}\'', "allow", None, None, id="unknown-member-ignored"
    ),
    pytest.param(
        'echo \'{"decision":"allow","updatedInput":[]}\'',
        "error",
        "updatedInput must be an object",
        None,
        id="bad-updated-input",
    ),
    pytest.param(
        'echo \'{"decision":"deny","reason":5}\'',
        "error",
        "reason must be a string",
        None,
        id="bad-reason",
    ),
    pytest.param(
        'echo \'{"hookSpecificOutput":{"hookEventName":"PermissionRequest",'
        '"decision":{"behavior":"allow","updatedInput":{"command":"pwd"}}}}\'',
        "allow",
        None,
        {"command": "pwd"},
        id="claude-code-allow",
    ),
    pytest.param(
        'echo \'{"hookSpecificOutput":{"hookEventName":"PermissionRequest",'
        '"decision":{"behavior":"deny","message":"nope"}}}\'',
        "deny",
        "nope",
        None,
        id="claude-code-deny",
    ),
    pytest.param("kill -9 $$", "error", "hook exited with status -9", None, id="killed-itself"),
]


@pytest.mark.parametrize(("command", "decision", "reason", "updated"), OUTCOMES)
def test_outcomes(
    tmp_path: Path, command: str, decision: str, reason: str | None, updated: Any
) -> None:
    got_decision, got_reason, got_updated = _summary(_run(command, tmp_path))
    assert got_decision == decision
    if reason is not None:
        assert got_reason is not None and reason in got_reason
    assert got_updated == updated


def test_stdin_env_and_cwd(tmp_path: Path) -> None:
    outcome = _run(
        'cat > input.json; printf "%s|%s|%s" "$SESSION_VAR" "$(pwd)" "${OPENAI_API_KEY-unset}"',
        tmp_path,
    )
    assert json.loads((tmp_path / "input.json").read_text()) == {
        "hook_event_name": "PermissionRequest",
        "session_id": "sess-1",
        "transcript_path": "/t.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "toolu_1",
    }
    assert outcome.stdout == f"s|{tmp_path}|unset"


def test_hook_env_is_clean() -> None:
    env = hook_env(
        {"A": "1", "PATH": "/session/bin"},
        {"PATH": "/bin", "SECRET_KEY": "x"},
        project_dir=Path("/p"),
    )
    assert env == {"A": "1", "PATH": "/session/bin", "CLAUDE_PROJECT_DIR": "/p"}


def test_large_stdin_ignored_by_hook_does_not_block(tmp_path: Path) -> None:
    big = event_input(
        "PermissionRequest",
        COMMON,
        {
            "tool_name": "Write",
            "tool_input": {"content": "x" * (4 * 1024 * 1024)},
            "tool_use_id": "t",
        },
    )
    proc = start_hook(
        'echo \'{"decision":"allow"}\'', big, cwd=tmp_path, env=ENV, timeout_s=10, children=CHILDREN
    )
    finished = proc.wait(30)
    assert finished is not None and _summary(finished)[0] == "allow"


def test_hang_times_out_as_error_and_kills_group(tmp_path: Path) -> None:
    proc = start_hook(
        "sleep 30 & echo $! > bg.pid; wait",
        INPUT,
        cwd=tmp_path,
        env=ENV,
        timeout_s=0.3,
        children=CHILDREN,
    )
    finished = proc.wait(30)
    assert finished is not None
    assert _summary(finished)[:2] == ("error", "hook timed out after 0.3 s")
    assert finished.verdict.timed_out is True
    assert finished.outcome == "error"
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
    finished = proc.wait(10)
    assert finished is not None
    assert (_summary(finished)[0], finished.outcome) == ("cancelled", "cancelled")
    assert finished.stdout == "started\n"
    with pytest.raises(ChildProcessError):
        os.waitpid(proc.pid, os.WNOHANG)  # reaped: no zombie left behind
    proc.kill()  # after reaping: a no-op


def test_wait_returns_none_while_running(tmp_path: Path) -> None:
    proc = start_hook(
        "exec sleep 30", INPUT, cwd=tmp_path, env=ENV, timeout_s=60, children=CHILDREN
    )
    assert proc.wait(0.05) is None
    proc.kill()
    finished = proc.wait(10)
    assert finished is not None and finished.verdict.cancelled


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
    while proc.finished is None:
        seen.extend(proc.read_output(5))
    assert "".join(o.stdout for o in seen) == "é"
    assert proc.finished.stdout == "é"


@pytest.mark.parametrize(
    ("size", "decision"),
    [(MAX_HOOK_OUTPUT_BYTES, "passthrough"), (MAX_HOOK_OUTPUT_BYTES + 1, "error")],
    ids=["at-limit", "one-past"],
)
def test_stdout_limit(tmp_path: Path, size: int, decision: str) -> None:
    finished = _run(f"head -c {size - 3} /dev/zero | tr '\\0' ' '; echo '{{}}'", tmp_path)
    assert _summary(finished)[0] == decision
    assert len(finished.stdout) == MAX_HOOK_OUTPUT_BYTES if decision == "error" else size


def test_hundred_megabytes_is_killed_at_the_limit(tmp_path: Path) -> None:
    """A hostile hook printing 100 MB: killed once stdout passes the limit,
    long before its deadline, and a failure (never an allow)."""
    finished = _run('head -c 100000000 /dev/zero; echo \'{"decision":"allow"}\'', tmp_path, 60)
    assert _summary(finished)[:2] == ("error", f"hook stdout exceeds {MAX_HOOK_OUTPUT_BYTES} bytes")
    assert len(finished.stdout) == MAX_HOOK_OUTPUT_BYTES


def test_non_utf8_stdout_is_a_failure(tmp_path: Path) -> None:
    assert _summary(_run("printf '\\377'", tmp_path))[0] == "error"


@pytest.mark.parametrize(
    ("script", "http", "failure"),
    [
        pytest.param(
            "echo 'http hook: status 503' >&2; exit 1", True, "http hook: status 503", id="http-1"
        ),
        pytest.param("exit 1", True, "http hook: failed", id="http-1-silent"),
        pytest.param(
            "echo 'http hook: status 503' >&2; exit 1",
            False,
            "hook exited with status 1",
            id="command-1",
        ),
        pytest.param("exit 3", True, "hook exited with status 3", id="http-other-status"),
    ],
)
def test_an_http_posts_failure_says_what_failed(
    tmp_path: Path, script: str, http: bool, failure: str
) -> None:
    """DECISIONS section 3: an http hook's POST child that fails (exit 1)
    names what failed in its last stderr line, which is the failure for
    every path that runs the hook (runner and permission race alike); a
    command hook's exit 1 stays its exit status."""
    proc = start_program(
        ["/bin/sh", "-c", script],
        b"",
        INPUT,
        cwd=tmp_path,
        env=ENV,
        timeout_s=10,
        children=CHILDREN,
        http=http,
    )
    finished = proc.wait(30)
    assert finished is not None
    assert (finished.verdict.failure, finished.exit_code) == (failure, int(script[-1]))
