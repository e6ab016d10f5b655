"""End-to-end: settings command hooks (real shell scripts) for every event
agentx fires, over the real process (DECISIONS section 3, DEC-HOOK-1..4).

Each hook script logs the JSON it received on stdin, then answers as the
test says. What the model saw is read on the loopback provider server; what
a tool did, on disk.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import uuid
from pathlib import Path

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    Record,
    encode,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
    write_script,
)
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
)
from tests.fakes.trickle_server import TrickleServer

COMMON = {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name"}


class Hooks:
    """Hook scripts in ``folder``: each logs its stdin to ``<name>.jsonl``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(exist_ok=True)
        self.settings: dict[str, list[Record]] = {}

    def add(
        self,
        event: str,
        name: str,
        body: str,
        *,
        matcher: str | None = None,
        timeout: float = 30,
        **extra: object,
    ) -> None:
        script = self.folder / f"{name}.sh"
        log = self.folder / f"{name}.jsonl"
        script.write_text(f'#!/bin/sh\n{{ cat; echo; }} >> "{log}"\n{body}\n')
        script.chmod(0o755)
        hook = {"type": "command", "command": str(script), "timeout": timeout, **extra}
        group: Record = {"hooks": [hook]}
        if matcher is not None:
            group["matcher"] = matcher
        self.settings.setdefault(event, []).append(group)

    def inputs(self, name: str) -> list[Record]:
        log = self.folder / f"{name}.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]

    def flag(self) -> list[str]:
        return ["--settings", json.dumps({"hooks": self.settings})]


def answer(output: Record) -> str:
    """A hook body that prints ``output`` as its JSON answer."""
    return f"echo '{json.dumps(output)}'"


def _scripted(home: Path, work: Path, turns: list[Record]) -> None:
    script = write_script(home / "script.json", turns)
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    work.mkdir(exist_ok=True)


def _bash(command: str) -> Record:
    return {"steps": [{"tool_use": {"name": "Bash", "input": {"command": command}}}]}


def _text(text: str) -> Record:
    return {"steps": [{"text": text}]}


def _tool_results(records: list[Record]) -> list[Record]:
    return [
        b
        for r in records
        if r["type"] == "user"
        for b in r["message"]["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]


def _remote(home: Path, url: str) -> None:
    write_auth(
        home,
        [
            {
                "id": "remote",
                "type": "anthropic",
                "model": "claude-test",
                "endpoint": url,
                "api_key": "sk-hooks-e2e-sentinel",
            }
        ],
    )


# -- PreToolUse ---------------------------------------------------------------------

BLOCKS = [
    pytest.param("echo 'no touching' >&2; exit 2", "no touching", id="exit-2-stderr"),
    pytest.param(
        answer(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "cc says no",
                }
            }
        ),
        "cc says no",
        id="claude-code-json",
    ),
    pytest.param(
        answer({"decision": "deny", "reason": "agentx says no"}),
        "agentx says no",
        id="agentx-json",
    ),
]


@pytest.mark.parametrize(("body", "reason"), BLOCKS)
def test_pre_tool_use_blocks_the_tool(home: Path, tmp_path: Path, body: str, reason: str) -> None:
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("PreToolUse", "pre", body, matcher="Bash")
    hooks.add("PreToolUse", "other", "exit 0", matcher="Read|Write")
    done = run_once(
        ["-p", "go", "--output-format", "stream-json", "--allowedTools", "Bash", *hooks.flag()],
        b"",
        home=home,
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    assert not (work / "made").exists()
    records = records_of(done.stdout)
    (result,) = _tool_results(records)
    assert (result["content"], result["is_error"]) == (reason, True)
    (received,) = hooks.inputs("pre")
    init = records[0]
    assert received == {
        "session_id": init["session_id"],
        "transcript_path": str(home / "sessions" / init["session_id"] / "transcript.jsonl"),
        "cwd": str(work),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "touch made"},
        "tool_use_id": result["tool_use_id"],
    }
    assert hooks.inputs("other") == []  # its matcher does not select Bash
    # Without --include-hook-events no hook record of the event is written.
    assert not [r for r in records if str(r.get("subtype", "")).startswith("hook_")]


def test_pre_tool_use_updated_input_that_a_policy_denies_never_runs(
    home: Path, tmp_path: Path
) -> None:
    """A hostile hook allows with an input a deny rule covers: the policy wins."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("echo hi"), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add(
        "PreToolUse",
        "pre",
        answer(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    "updatedInput": {"command": "touch pwned"},
                }
            }
        ),
    )
    done = run_once(
        [
            "-p",
            "go",
            "--output-format",
            "stream-json",
            "--allowedTools",
            "Bash(echo:*)",
            "--disallowedTools",
            "Bash(touch:*)",
            *hooks.flag(),
        ],
        b"",
        home=home,
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    assert not (work / "pwned").exists()
    (result,) = _tool_results(records_of(done.stdout))
    assert result["is_error"] is True and "denied" in result["content"]


def test_pre_tool_use_allow_with_updated_input_runs_the_new_input(
    home: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch original"), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add(
        "PreToolUse",
        "pre",
        answer({"decision": "allow", "updatedInput": {"command": "touch rewritten"}}),
    )
    # Default mode would ask (no channel in -p: deny); the hook's allow skips that ask.
    done = run_once(["-p", "go", *hooks.flag()], b"", home=home, cwd=work)
    assert done.returncode == 0, done.stderr
    assert (work / "rewritten").exists() and not (work / "original").exists()


HOSTILE = [
    pytest.param("exec sleep 300", 1, "timed out after 1 s", id="never-exits"),
    pytest.param(
        """head -c 100000000 /dev/zero; echo '{"decision":"allow"}'""",
        60,
        "stdout exceeds 65536 bytes",
        id="prints-100-MB",
    ),
    pytest.param("""echo '{"decision": "allow",'""", 30, "invalid JSON", id="invalid-json"),
    pytest.param("exit 1", 30, "exited with status 1", id="fails"),
]


@pytest.mark.parametrize(("body", "timeout", "failure"), HOSTILE)
def test_a_failing_pre_tool_use_hook_never_approves(
    home: Path, tmp_path: Path, body: str, timeout: float, failure: str
) -> None:
    """Each hostile hook is reported (one WARN line, its hook_response says
    error) and approves nothing: the tool still needs a permission nobody
    can give in -p, so it does not run."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("PreToolUse", "pre", body, timeout=timeout)
    done = run_once(
        ["-p", "go", "--output-format", "stream-json", "--include-hook-events", *hooks.flag()],
        b"",
        home=home,
        cwd=work,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert not (work / "made").exists()
    records = records_of(done.stdout)
    (response,) = [
        r
        for r in records
        if r.get("subtype") == "hook_response" and r["hook_event"] == "PreToolUse"
    ]
    assert response["outcome"] == "error"
    warnings = [line for line in done.stderr.decode().splitlines() if "PreToolUse hook" in line]
    assert len(warnings) == 1 and failure in warnings[0]
    assert sum(len(r.get("stdout", "")) for r in records) <= 2 * 65536


# -- context that reaches the model -------------------------------------------------


def test_every_context_reaches_the_models_request(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("parsnip\n")
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("SessionStart", "start", "echo SESSION-START-CONTEXT")
    hooks.add(
        "UserPromptSubmit",
        "prompt",
        answer(
            {
                "hookSpecificOutput": {
                    "hookEventName": "UserPromptSubmit",
                    "additionalContext": "PROMPT-CONTEXT",
                }
            }
        ),
    )
    hooks.add(
        "PreToolUse",
        "pre",
        answer(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "additionalContext": "PRE-CONTEXT",
                }
            }
        ),
    )
    hooks.add(
        "PostToolUse",
        "post",
        answer(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PostToolUse",
                    "additionalContext": "POST-CONTEXT",
                }
            }
        ),
    )
    replies = [
        Reply(chunks=anthropic_tool_use("Read", {"file_path": str(work / "notes.txt")})),
        Reply(chunks=anthropic_text_stream("done")),
    ]
    with ProviderServer(replies) as server:
        _remote(home, server.url)
        done = run_once(
            [*DUPLEX, *hooks.flag()], encode(user("what is in notes?")), home=home, cwd=work
        )
        requests = [json.dumps(r.body) for r in server.requests]
    assert done.returncode == 0, done.stderr
    assert len(requests) == 2
    assert "SESSION-START-CONTEXT" in requests[0] and "PROMPT-CONTEXT" in requests[0]
    assert "PRE-CONTEXT" in requests[1] and "POST-CONTEXT" in requests[1]
    assert [i["source"] for i in hooks.inputs("start")] == ["startup"]
    assert hooks.inputs("prompt")[0]["prompt"] == "what is in notes?"
    (post,) = hooks.inputs("post")
    assert "parsnip" in post["tool_response"]


def test_user_prompt_submit_blocks_the_prompt(home: Path, tmp_path: Path) -> None:
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("UserPromptSubmit", "prompt", "echo 'no secrets in prompts' >&2; exit 2")
    with ProviderServer([Reply(chunks=anthropic_text_stream("never"))]) as server:
        _remote(home, server.url)
        done = run_once([*DUPLEX, *hooks.flag()], encode(user("the key is hunter2")), home=home)
        requests = list(server.requests)
    assert requests == []  # the prompt never reached the model
    result = next(r for r in records_of(done.stdout) if is_result(r))
    assert result["is_error"] is True
    assert result["errors"] == ["prompt blocked by a UserPromptSubmit hook: no secrets in prompts"]
    assert hooks.inputs("prompt")[0]["prompt"] == "the key is hunter2"


def test_stop_block_makes_the_turn_go_on(home: Path, tmp_path: Path) -> None:
    hooks = Hooks(tmp_path / "hooks")
    hooks.add(
        "Stop",
        "stop",
        """tail -n 1 "$(dirname "$0")/stop.jsonl" | grep -q '"stop_hook_active": true' """
        + "&& exit 0\n"
        + answer({"decision": "block", "reason": "RUN-THE-TESTS"}),
    )
    replies = [
        Reply(chunks=anthropic_text_stream("first")),
        Reply(chunks=anthropic_text_stream("second")),
    ]
    with ProviderServer(replies) as server:
        _remote(home, server.url)
        done = run_once([*DUPLEX, *hooks.flag()], encode(user("go")), home=home)
        requests = [json.dumps(r.body) for r in server.requests]
    assert done.returncode == 0, done.stderr
    assert len(requests) == 2 and "RUN-THE-TESTS" in requests[1]
    result = next(r for r in records_of(done.stdout) if is_result(r))
    assert (result["result"], result["num_turns"]) == ("second", 2)
    assert [(i["stop_hook_active"], i["last_assistant_message"]) for i in hooks.inputs("stop")] == [
        (False, "first"),
        (True, "second"),
    ]


def test_stop_continuation_is_bounded_by_max_turns(home: Path, tmp_path: Path) -> None:
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("Stop", "stop", answer({"decision": "block", "reason": "again"}))
    with ProviderServer([Reply(chunks=anthropic_text_stream("more"))]) as server:
        _remote(home, server.url)
        done = run_once([*DUPLEX, "--max-turns", "3", *hooks.flag()], encode(user("go")), home=home)
    result = next(r for r in records_of(done.stdout) if is_result(r))
    assert (result["subtype"], result["num_turns"]) == ("error_max_turns", 3)
    assert len(hooks.inputs("stop")) == 3


def test_stop_failure_on_a_failed_model_call(home: Path, tmp_path: Path) -> None:
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("StopFailure", "failure", "exit 0")
    hooks.add("Stop", "stop", "exit 0")
    error = json.dumps(
        {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}
    )
    with ProviderServer(
        [
            Reply(
                status=400,
                headers=(("content-type", "application/json"),),
                chunks=(error.encode(),),
            )
        ]
    ) as server:
        _remote(home, server.url)
        run_once([*DUPLEX, *hooks.flag()], encode(user("go")), home=home)
    (failure,) = hooks.inputs("failure")
    assert failure["hook_event_name"] == "StopFailure" and failure["error"]
    assert hooks.inputs("stop") == []


# -- tools ---------------------------------------------------------------------------


def test_post_tool_use_failure_sees_the_error(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _scripted(
        home,
        work,
        [
            {
                "steps": [
                    {
                        "tool_use": {
                            "name": "Read",
                            "input": {"file_path": str(work / "missing.txt")},
                        }
                    }
                ]
            },
            _text("done"),
        ],
    )
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("PostToolUseFailure", "failure", "exit 0", matcher="Read")
    hooks.add("PostToolUse", "post", "exit 0")
    done = run_once(["-p", "go", *hooks.flag()], b"", home=home, cwd=work)
    assert done.returncode == 0, done.stderr
    (failure,) = hooks.inputs("failure")
    assert failure["tool_name"] == "Read" and failure["error"] and failure["is_interrupt"] is False
    assert hooks.inputs("post") == []


def test_permission_request_in_claude_codes_format(home: Path, tmp_path: Path) -> None:
    """A PermissionRequest hook carried over from Claude Code decides (no
    channel in -p: the hook alone decides, DEC-EOF-2)."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add(
        "PermissionRequest",
        "request",
        answer(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PermissionRequest",
                    "decision": {"behavior": "allow"},
                }
            }
        ),
        matcher="Bash",
    )
    hooks.add("Notification", "notify", "exit 0")
    done = run_once(["-p", "go", *hooks.flag()], b"", home=home, cwd=work)
    assert done.returncode == 0, done.stderr
    assert (work / "made").exists()
    (request,) = hooks.inputs("request")
    assert (request["tool_name"], request["tool_input"]) == ("Bash", {"command": "touch made"})
    (notify,) = hooks.inputs("notify")
    assert (notify["notification_type"], notify["message"]) == (
        "permission_prompt",
        "Claude needs your permission to use Bash",
    )


# -- compaction and the session's life ----------------------------------------------


def test_pre_compact_blocks_and_post_compact_follows(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _scripted(home, work, [_text("one"), _text("two"), _text("THE SUMMARY")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add(
        "PreCompact",
        "pre",
        # Blocks the first compaction only.
        """[ -e "$0.once" ] && exit 0; touch "$0.once"; echo 'not now' >&2; exit 2""",
        matcher="manual",
    )
    hooks.add("PostCompact", "post", "exit 0")
    hooks.add("SessionStart", "start", "exit 0", matcher="compact")
    stdin = b"".join(encode(user(t)) for t in ("a", "b", "/compact first", "/compact keep names"))
    done = run_once([*DUPLEX, *hooks.flag()], stdin, home=home, cwd=work)
    assert done.returncode == 0, done.stderr
    outputs = [
        r["content"] for r in records_of(done.stdout) if r.get("subtype") == "local_command_output"
    ]
    assert outputs[0] == "Error: compaction failed: blocked by a PreCompact hook: not now"
    assert outputs[1].startswith("Compacted")
    assert [(i["trigger"], i["custom_instructions"]) for i in hooks.inputs("pre")] == [
        ("manual", "first"),
        ("manual", "keep names"),
    ]
    (post,) = hooks.inputs("post")
    assert post["trigger"] == "manual" and "THE SUMMARY" in post["compact_summary"]
    assert [i["source"] for i in hooks.inputs("start")] == ["compact"]


def _terminated(pid: int) -> bool:
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], 5)[0])
    finally:
        os.close(fd)


def test_session_start_and_end_over_clear_resume_and_exit(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _scripted(home, work, [_text("one"), _text("two")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("SessionStart", "start", "exit 0")
    hooks.add("SessionEnd", "end", "exit 0")
    # A SessionEnd hook that never exits is stopped within the shutdown deadline.
    hooks.add(
        "SessionEnd", "stuck", 'echo $$ > "$0.pid"; exec sleep 300', matcher="other", timeout=600
    )
    session = str(uuid.uuid4())
    first = run_once(
        [*DUPLEX, "--session-id", session, *hooks.flag()],
        encode(user("hi")) + encode(user("/clear")),
        home=home,
        cwd=work,
    )
    assert first.returncode == 0, first.stderr
    assert _terminated(int((tmp_path / "hooks" / "stuck.sh.pid").read_text()))
    resumed = run_once(
        [*DUPLEX, "--resume", session, *hooks.flag()], encode(user("again")), home=home, cwd=work
    )
    assert resumed.returncode == 0, resumed.stderr
    starts = hooks.inputs("start")
    assert [i["source"] for i in starts] == ["startup", "clear", "resume"]
    assert starts[0]["session_id"] == session == starts[2]["session_id"]
    assert starts[1]["session_id"] != session  # /clear renews the id
    assert [i["reason"] for i in hooks.inputs("end")] == ["clear", "other", "other"]
    # Nothing is written after the final idle (WIRE-004).
    last = records_of(first.stdout)[-1]
    assert last.get("state") == "idle"


def test_include_hook_events_writes_every_events_records(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _scripted(home, work, [_text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("UserPromptSubmit", "prompt", "echo progress >&2; exit 0")
    done = run_once(
        [*DUPLEX, "--include-hook-events", *hooks.flag()], encode(user("hi")), home=home, cwd=work
    )
    records = [r for r in records_of(done.stdout) if str(r.get("subtype", "")).startswith("hook_")]
    assert [(r["subtype"], r["hook_event"]) for r in records] == [
        ("hook_started", "UserPromptSubmit"),
        ("hook_progress", "UserPromptSubmit"),
        ("hook_response", "UserPromptSubmit"),
    ]
    response = records[-1]
    assert (response["outcome"], response["exit_code"], response["stderr"]) == (
        "success",
        0,
        "progress\n",
    )
    assert len({r["hook_id"] for r in records}) == 1


def test_duplex_session_runs_hooks_unchanged_under_a_permission_prompt(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    """PreToolUse ask makes agentx ask the host even where the policy allows."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add(
        "PreToolUse",
        "pre",
        answer(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "ask",
                    "permissionDecisionReason": "check me",
                }
            }
        ),
    )
    proc = AgentxProcess((*DUPLEX, "--allowedTools", "Bash", *hooks.flag()), home=home, cwd=work)
    processes.append(proc)
    proc.send(user("go"))
    request = proc.until(lambda r: r["type"] == "control_request")[-1]
    assert request["request"]["subtype"] == "can_use_tool"
    proc.send(
        {
            "type": "control_response",
            "response": {
                "subtype": "success",
                "request_id": request["request_id"],
                "response": {"behavior": "allow"},
            },
        }
    )
    proc.until(is_result)
    proc.close_stdin()
    assert proc.wait() == 0
    assert (work / "made").exists()


def test_hooks_of_an_event_agentx_never_fires_are_named_once(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _scripted(home, work, [_text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("WorktreeCreate", "worktree", "exit 0")
    done = run_once(["-p", "go", *hooks.flag()], b"", home=home, cwd=work)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.decode().splitlines() if "WorktreeCreate" in line]
    assert len(lines) == 1
    assert lines[0].endswith(
        "agentx: WARNING: settings define WorktreeCreate hooks; agentx never fires WorktreeCreate"
    )


# -- merge across sources (DEC-HOOK-1) ------------------------------------------------


@pytest.mark.parametrize(
    "local",
    [
        pytest.param({"hooks": {"PreToolUse": []}}, id="empty-list"),
        pytest.param({"hooks": {}}, id="empty-object"),
        pytest.param({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": []}]}}, id="own-list"),
    ],
)
def test_a_local_settings_file_never_drops_a_project_guard(
    home: Path, tmp_path: Path, local: Record
) -> None:
    """Hook lists concatenate across sources as Claude Code merges them: the
    project's PreToolUse guard still blocks under a local file that tries to
    empty the list."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("PreToolUse", "guard", "echo 'project guard' >&2; exit 2", matcher="Bash")
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks.settings}))
    (work / ".agentx").mkdir()
    (work / ".agentx" / "settings.local.json").write_text(json.dumps(local))
    done = run_once(
        ["-p", "go", "--output-format", "stream-json", "--allowedTools", "Bash"],
        b"",
        home=home,
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    assert not (work / "made").exists()
    (result,) = _tool_results(records_of(done.stdout))
    assert (result["content"], result["is_error"]) == ("project guard", True)
    assert len(hooks.inputs("guard")) == 1


@pytest.mark.parametrize(("where", "runs"), [("local", True), ("policy", False)])
def test_disable_all_hooks_keeps_policy_hooks_unless_the_policy_says_so(
    home: Path, tmp_path: Path, where: str, runs: bool
) -> None:
    """``disableAllHooks`` in a local file stops the project's hooks but not
    the policy's; in the policy file it stops every hook (Claude Code)."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("PreToolUse", "project", "exit 0", matcher="Bash")
    (work / ".agentx").mkdir()
    (work / ".agentx" / "settings.json").write_text(json.dumps({"hooks": hooks.settings}))
    hooks.settings = {}
    hooks.add("PreToolUse", "policy", "echo 'policy guard' >&2; exit 2", matcher="Bash")
    policy: Record = {"hooks": hooks.settings}
    if where == "policy":
        policy["disableAllHooks"] = True
    else:
        (work / ".agentx" / "settings.local.json").write_text('{"disableAllHooks": true}')
    (tmp_path / "policy.json").write_text(json.dumps(policy))
    done = run_once(
        ["-p", "go", "--output-format", "stream-json", "--allowedTools", "Bash"],
        b"",
        home=home,
        cwd=work,
        env={"AGENTX_POLICY": str(tmp_path / "policy.json")},
    )
    assert done.returncode == 0, done.stderr
    assert hooks.inputs("project") == []
    assert (len(hooks.inputs("policy")) == 1) is runs
    assert (work / "made").exists() is not runs


# -- systemMessage, suppressOutput, PostToolUse outputs, PermissionDenied -------------


@pytest.mark.parametrize("profile", ["sdk", "extended", "standalone"])
def test_system_message_is_shown_to_the_user(home: Path, tmp_path: Path, profile: str) -> None:
    """A hook's systemMessage is what Claude Code shows the user: a
    ``system/informational`` warning record for an SDK client; one INFO line
    on stderr in the standalone profile, whose stdout keeps the spec's records."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("echo hi"), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("PreToolUse", "pre", answer({"systemMessage": "LINTER-IS-SLOW"}), matcher="Bash")
    done = run_once(
        [*DUPLEX, "--control-profile", profile, "--allowedTools", "Bash", *hooks.flag()],
        encode(user("go")),
        home=home,
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    shown = [r for r in records_of(done.stdout) if r.get("subtype") == "informational"]
    stderr = done.stderr.decode()
    if profile == "standalone":
        assert shown == []
        assert "agentx: INFO: PreToolUse hook message: LINTER-IS-SLOW" in stderr
    else:
        assert [(r["content"], r["level"]) for r in shown] == [("LINTER-IS-SLOW", "warning")]
        assert "LINTER-IS-SLOW" not in stderr
    assert "WARNING" not in stderr


def test_suppress_output_keeps_stdout_out_of_the_hook_response(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _scripted(home, work, [_text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add(
        "UserPromptSubmit",
        "hidden",
        "sleep 0.2; echo err-shown >&2; " + answer({"suppressOutput": True}),
    )
    hooks.add("UserPromptSubmit", "visible", answer({"suppressOutput": False}))
    done = run_once(
        [*DUPLEX, "--include-hook-events", *hooks.flag()], encode(user("hi")), home=home, cwd=work
    )
    assert done.returncode == 0, done.stderr
    responses = {
        Path(r["hook_name"]).stem: r
        for r in records_of(done.stdout)
        if r.get("subtype") == "hook_response"
    }
    hidden, visible = responses["hidden"], responses["visible"]
    assert (hidden["stdout"], hidden["stderr"], hidden["output"]) == (
        "",
        "err-shown\n",
        "err-shown\n",
    )
    assert visible["stdout"] == '{"suppressOutput": false}\n'


POST_OUTPUTS = [
    pytest.param(
        {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": "REPLACED"}},
        "REPLACED",
        id="updatedToolOutput-string",
    ),
    pytest.param(
        {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "updatedToolOutput": {"stdout": "REPLACED", "stderr": ""},
            }
        },
        '{"stdout":"REPLACED","stderr":""}',
        id="updatedToolOutput-object",
    ),
    pytest.param(
        {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": "NO"}},
        "ORIGINAL-OUTPUT\n",
        id="updatedMCPToolOutput-not-for-bash",
    ),
    pytest.param(
        {"decision": "block", "reason": "LOOK-AGAIN"},
        "ORIGINAL-OUTPUT\n\n\nLOOK-AGAIN",
        id="decision-block-reason",
    ),
]


@pytest.mark.parametrize(("output", "seen"), POST_OUTPUTS)
def test_post_tool_use_output_reaches_the_model(
    home: Path, tmp_path: Path, output: Record, seen: str
) -> None:
    """PostToolUse's updatedToolOutput replaces what the model sees of the
    tool's result (the tool_result record and the next model request); its
    decision block's reason reaches the model with the result."""
    work = tmp_path / "work"
    work.mkdir()
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("PostToolUse", "post", answer(output), matcher="Bash")
    replies = [
        Reply(chunks=anthropic_tool_use("Bash", {"command": "echo ORIGINAL-OUTPUT"})),
        Reply(chunks=anthropic_text_stream("done")),
    ]
    with ProviderServer(replies) as server:
        _remote(home, server.url)
        done = run_once(
            [*DUPLEX, "--allowedTools", "Bash", *hooks.flag()],
            encode(user("go")),
            home=home,
            cwd=work,
        )
        second = server.requests[1].body
    assert done.returncode == 0, done.stderr
    (result,) = _tool_results(records_of(done.stdout))
    assert (result["content"], result["is_error"]) == (seen, False)
    sent = [
        b
        for m in second["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert json.dumps(sent[-1]).count(json.dumps(seen)[1:-1]) == 1
    (received,) = hooks.inputs("post")
    assert "ORIGINAL-OUTPUT" in received["tool_response"]


def test_permission_denied_fires_after_a_rule_denies(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add(
        "PermissionDenied",
        "denied",
        answer(
            {
                "hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": True},
                "systemMessage": "DENIAL-SEEN",
            }
        ),
        matcher="Bash",
    )
    hooks.add("PermissionDenied", "other", "exit 0", matcher="Read")
    done = run_once(
        [*DUPLEX, "--control-profile", "sdk", "--disallowedTools", "Bash(touch:*)", *hooks.flag()],
        encode(user("go")),
        home=home,
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    assert not (work / "made").exists()
    records = records_of(done.stdout)
    (result,) = _tool_results(records)
    assert result["is_error"] is True
    (received,) = hooks.inputs("denied")
    assert set(received) == COMMON | {"tool_name", "tool_input", "tool_use_id", "reason"}
    assert (received["tool_name"], received["tool_input"]) == ("Bash", {"command": "touch made"})
    assert received["tool_use_id"] == result["tool_use_id"]
    assert received["reason"] == result["content"]
    assert "Bash(touch:*)" in received["reason"]
    assert hooks.inputs("other") == []
    assert [r["content"] for r in records if r.get("subtype") == "informational"] == ["DENIAL-SEEN"]


def test_post_tool_batch_sees_every_result_and_its_context_reaches_the_model(
    home: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    hooks = Hooks(tmp_path / "hooks")
    hooks.add(
        "PostToolBatch",
        "batch",
        answer(
            {
                "hookSpecificOutput": {
                    "hookEventName": "PostToolBatch",
                    "additionalContext": "BATCH-CONTEXT",
                }
            }
        ),
    )
    replies = [
        Reply(chunks=anthropic_tool_use("Bash", {"command": "echo BATCH-OUT"}, "toolu_b1")),
        Reply(chunks=anthropic_text_stream("done")),
        Reply(chunks=anthropic_text_stream("again")),
    ]
    with ProviderServer(replies) as server:
        _remote(home, server.url)
        done = run_once(
            [*DUPLEX, "--allowedTools", "Bash", *hooks.flag()],
            encode(user("go")),
            home=home,
            cwd=work,
        )
        assert done.returncode == 0, done.stderr
        # The stored history holds the context after the results, and resumes.
        session = records_of(done.stdout)[0]["session_id"]
        resumed = run_once(["-p", "more", "--resume", session], b"", home=home, cwd=work)
        assert resumed.returncode == 0, resumed.stderr
        requests = [r.body for r in server.requests]
    assert json.dumps(requests[2]).count("BATCH-CONTEXT") == 1
    (received,) = hooks.inputs("batch")
    assert set(received) == COMMON | {"tool_calls"}
    assert received["tool_calls"] == [
        {
            "tool_name": "Bash",
            "tool_input": {"command": "echo BATCH-OUT"},
            "tool_use_id": "toolu_b1",
            "tool_response": "BATCH-OUT\n",
        }
    ]
    last = requests[1]["messages"][-1]
    assert [b["type"] for b in last["content"]] == ["tool_result", "text"]
    assert last["content"][1]["text"] == "BATCH-CONTEXT"
    # The tool_result record the client sees is the tool's own.
    (result,) = _tool_results(records_of(done.stdout))
    assert result["content"] == "BATCH-OUT\n"


# -- CLAUDE_ENV_FILE ---------------------------------------------------------------

ENV_PROBE = 'echo "G=$GREETING L=$LD_PRELOAD K=$LEAK F=$CLAUDE_ENV_FILE"; echo "P=$PATH"'


def test_claude_env_file_reaches_bash_without_loader_path_or_credentials(
    home: Path, tmp_path: Path
) -> None:
    """A SessionStart hook's export lines reach the Bash child's environment;
    PATH, LD_PRELOAD and a variable holding the provider's key do not (one
    WARN line each), and the file's path is never a Bash variable."""
    work = tmp_path / "work"
    work.mkdir()
    hooks = Hooks(tmp_path / "hooks")
    hooks.add(
        "SessionStart",
        "start",
        "{ echo \"export GREETING='hello world'\"; echo 'export PATH=/evil';"
        " echo 'export LD_PRELOAD=/tmp/evil.so'; echo 'export LEAK=sk-hooks-e2e-sentinel'; }"
        ' > "$CLAUDE_ENV_FILE"; echo "$CLAUDE_ENV_FILE" > ' + str(tmp_path / "where"),
    )
    replies = [
        Reply(chunks=anthropic_tool_use("Bash", {"command": ENV_PROBE})),
        Reply(chunks=anthropic_text_stream("done")),
    ]
    with ProviderServer(replies) as server:
        _remote(home, server.url)
        done = run_once(
            [*DUPLEX, "--allowedTools", "Bash", *hooks.flag()],
            encode(user("go")),
            home=home,
            cwd=work,
        )
    assert done.returncode == 0, done.stderr  # no credential reached stdout
    (result,) = _tool_results(records_of(done.stdout))
    first, second = result["content"].splitlines()
    assert first == "G=hello world L= K= F="
    assert second != "P=/evil" and second.startswith("P=/")
    stderr = done.stderr.decode()
    refusals = [ln for ln in stderr.splitlines() if "WARNING: CLAUDE_ENV_FILE: line" in ln]
    assert [ln.split("line ", 1)[1] for ln in refusals] == [
        "2: PATH may not be set this way",
        "3: LD_PRELOAD may not be set this way",
        "4: LEAK holds a credential agentx holds",
    ]
    assert "sk-hooks-e2e-sentinel" not in stderr and "/evil" not in stderr
    # The private folder is gone once read.
    assert not Path((tmp_path / "where").read_text().strip()).parent.exists()


@pytest.mark.parametrize(
    ("body", "warning"),
    [
        pytest.param('truncate -s 100M "$CLAUDE_ENV_FILE"', "exceeds 65536 bytes", id="100-MB"),
        pytest.param(
            'rm "$CLAUDE_ENV_FILE"; mkfifo "$CLAUDE_ENV_FILE"', "not a regular", id="fifo"
        ),
        pytest.param(
            'rm "$CLAUDE_ENV_FILE"; ln -s /dev/zero "$CLAUDE_ENV_FILE"', "cannot read", id="link"
        ),
    ],
)
def test_a_hostile_claude_env_file_sets_nothing(
    home: Path, tmp_path: Path, body: str, warning: str
) -> None:
    work = tmp_path / "work"
    _scripted(home, work, [_bash(ENV_PROBE), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("SessionStart", "start", body)
    done = run_once(
        ["-p", "go", "--output-format", "stream-json", "--allowedTools", "Bash", *hooks.flag()],
        b"",
        home=home,
        cwd=work,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    (result,) = _tool_results(records_of(done.stdout))
    assert result["content"].splitlines()[0] == "G= L= K= F="
    lines = [ln for ln in done.stderr.decode().splitlines() if "CLAUDE_ENV_FILE" in ln]
    assert len(lines) == 1 and warning in lines[0] and "WARNING" in lines[0]


# -- async command hooks ------------------------------------------------------------


def test_a_system_message_on_stderr_never_carries_a_credential(home: Path, tmp_path: Path) -> None:
    """stderr has no output guard: the standalone profile's INFO line for a
    hook's systemMessage replaces every credential literal of the union
    (DEC-AUTH-3), here an auth.json api_key a hook echoed."""
    work = tmp_path / "work"
    secret = "sk-ant-hook-message-sentinel-7"
    script = write_script(home / "script.json", [_bash("echo hi"), _text("done")])
    write_auth(
        home,
        [
            {"id": "s", "type": "scripted", "model": "m", "script": str(script)},
            {
                "id": "spare",
                "type": "anthropic",
                "endpoint": "https://api.anthropic.com",
                "model": "claude-x",
                "api_key": secret,
            },
        ],
    )
    work.mkdir()
    hooks = Hooks(tmp_path / "hooks")
    # Written into the hook itself: a variable holding it is scrubbed from
    # the hook's environment (DEC-AUTH-3).
    hooks.add("PreToolUse", "pre", answer({"systemMessage": f"key is {secret}"}), matcher="Bash")
    done = run_once(
        [*DUPLEX, "--provider", "s", "--allowedTools", "Bash", *hooks.flag()],
        encode(user("go")),
        home=home,
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    stderr = done.stderr.decode()
    assert "agentx: INFO: PreToolUse hook message: key is [redacted]" in stderr
    assert secret not in stderr and secret.encode() not in done.stdout


def test_async_hooks_never_block_and_one_that_never_exits_is_killed_at_the_end(
    home: Path, tmp_path: Path
) -> None:
    """An ``async`` PreToolUse hook's exit 2 does not block the tool (it
    decides nothing); a later firing collects a finished one (its
    systemMessage is shown); one that never exits is killed with the session."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("PreToolUse", "blocker", "echo no >&2; exit 2", matcher="Bash", **{"async": True})
    hooks.add("PreToolUse", "shows", answer({"systemMessage": "ASYNC-DONE"}), **{"async": True})
    hooks.add(
        "UserPromptSubmit",
        "forever",
        f"echo $$ > {tmp_path / 'pid'}; exec sleep 600",
        timeout=600,
        asyncRewake=True,
    )
    hooks.add("Stop", "stop", "sleep 0.3")
    done = run_once(
        [*DUPLEX, "--allowedTools", "Bash", *hooks.flag()],
        encode(user("go")),
        home=home,
        cwd=work,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert (work / "made").exists()  # the async block decided nothing
    assert len(hooks.inputs("blocker")) == 1 and len(hooks.inputs("forever")) == 1
    assert "agentx: INFO: PreToolUse hook message: ASYNC-DONE" in done.stderr.decode()
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_async_must_be_a_boolean(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    _scripted(home, work, [_text("done")])
    hooks = Hooks(tmp_path / "hooks")
    hooks.add("Stop", "stop", "exit 0", **{"async": "yes"})
    done = run_once(["-p", "go", *hooks.flag()], b"", home=home, cwd=work)
    assert done.returncode == 2
    assert b"hooks.Stop[0].hooks[0].async must be a boolean" in done.stderr


# -- http hooks ------------------------------------------------------------------------


def _json_reply(body: Record, status: int = 200) -> Reply:
    return Reply(
        status=status,
        headers=(("content-type", "application/json"),),
        chunks=(json.dumps(body).encode(),),
    )


def _http_hook(url: str, **extra: object) -> Record:
    return {"type": "http", "url": url, "timeout": 10, **extra}


DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "the server says no",
    }
}


def test_an_http_hook_posts_the_input_and_its_answer_decides(home: Path, tmp_path: Path) -> None:
    """The hook input is POSTed as JSON; only allowedEnvVars are interpolated
    into the headers; the response body is read as a command hook's stdout."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    with ProviderServer([_json_reply(DENY)]) as server:
        hook = _http_hook(
            server.url + "/hook",
            headers={"Authorization": "Bearer $MY_TOKEN", "X-Other": "[${OTHER}]"},
            allowedEnvVars=["MY_TOKEN"],
        )
        settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
        done = run_once(
            [
                *("-p", "go", "--output-format", "stream-json", "--allowedTools", "Bash"),
                *("--settings", json.dumps(settings)),
            ],
            b"",
            home=home,
            cwd=work,
            env={"MY_TOKEN": "tok-hook-e2e-secret", "OTHER": "not-sent"},
        )
        (request,) = server.requests
    assert done.returncode == 0, done.stderr
    assert not (work / "made").exists()
    (result,) = _tool_results(records_of(done.stdout))
    assert (result["content"], result["is_error"]) == ("the server says no", True)
    assert request.path == "/hook"
    assert request.headers["authorization"] == "Bearer tok-hook-e2e-secret"
    assert request.headers["x-other"] == "[]"
    assert request.headers["content-type"] == "application/json"
    assert request.body["hook_event_name"] == "PreToolUse"
    assert request.body["tool_input"] == {"command": "touch made"}
    assert set(request.body) == COMMON | {"tool_name", "tool_input", "tool_use_id"}


def test_an_http_hooks_header_value_never_reaches_stdout(home: Path, tmp_path: Path) -> None:
    """The interpolated header value joined the credential union: a server
    that echoes it back into the reason ends the session (exit 3) before a
    byte of it is written."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    echo = {**DENY, "hookSpecificOutput": {**DENY["hookSpecificOutput"]}}
    echo["hookSpecificOutput"]["permissionDecisionReason"] = "I saw tok-hook-e2e-secret"
    with ProviderServer([_json_reply(echo)]) as server:
        hook = _http_hook(
            server.url, headers={"Authorization": "Bearer $MY_TOKEN"}, allowedEnvVars=["MY_TOKEN"]
        )
        settings = {"hooks": {"PreToolUse": [{"hooks": [hook]}]}}
        done = run_once(
            ["-p", "go", "--output-format", "stream-json", "--settings", json.dumps(settings)],
            b"",
            home=home,
            cwd=work,
            env={"MY_TOKEN": "tok-hook-e2e-secret"},
        )
    assert done.returncode == 3
    assert b"tok-hook-e2e-secret" not in done.stdout + done.stderr
    assert not (work / "made").exists()


@pytest.mark.parametrize("failure", ["trickle", "status-500", "refused"])
def test_a_failing_http_hook_approves_nothing(home: Path, tmp_path: Path, failure: str) -> None:
    """A server that trickles its headers past the hook's timeout, answers
    500, or is not there: the hook failed (one WARN line naming why, not the
    URL's query), the tool was not approved by it (the mode denies it with
    nobody to ask), and nothing is left running."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    with contextlib.ExitStack() as stack:
        if failure == "trickle":
            url = stack.enter_context(TrickleServer(where="headers", every=0.2)).url
        elif failure == "status-500":
            url = stack.enter_context(ProviderServer([_json_reply({}, status=500)])).url
        else:
            with socket.create_server(("127.0.0.1", 0)) as gone:
                url = f"http://127.0.0.1:{gone.getsockname()[1]}/"
        allow = {
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
        }
        hook = _http_hook(url + "?key=q-secret-1", timeout=2)
        settings = {"hooks": {"PreToolUse": [{"hooks": [hook]}]}}
        done = run_once(
            ["-p", "go", "--output-format", "stream-json", "--settings", json.dumps(settings)],
            b"",
            home=home,
            cwd=work,
            timeout=60,
        )
    assert allow  # what a working server would have answered
    assert done.returncode == 0, done.stderr
    assert not (work / "made").exists()
    stderr = done.stderr.decode()
    (warning,) = [ln for ln in stderr.splitlines() if "PreToolUse hook" in ln]
    expected = {
        "trickle": ("no answer within 2 s", "timed out after 2 s"),
        "status-500": ("status 500",),
        "refused": ("request failed (ConnectError)",),
    }[failure]
    assert any(text in warning for text in expected), warning
    assert "q-secret-1" not in stderr


def test_http_hooks_come_only_from_settings_files(home: Path, tmp_path: Path) -> None:
    """``apply_flag_settings`` cannot add one: its header values could not join
    the union any more (DEC-AUTH-3)."""
    work = tmp_path / "work"
    _scripted(home, work, [_text("done")])
    hooks = {"PreToolUse": [{"hooks": [_http_hook("http://127.0.0.1:9/")]}]}
    done = run_once(
        [*DUPLEX, "--control-profile", "extended"],
        encode(
            {
                "type": "control_request",
                "request_id": "r1",
                "request": {"subtype": "apply_flag_settings", "settings": {"hooks": hooks}},
            }
        ),
        home=home,
        cwd=work,
    )
    (response,) = [r for r in records_of(done.stdout) if r["type"] == "control_response"]
    assert response["response"]["subtype"] == "error"
    assert "http hooks come only from settings files" in response["response"]["error"]


@pytest.mark.parametrize("kind", ["prompt", "agent"])
def test_prompt_and_agent_hooks_are_refused_by_name(home: Path, tmp_path: Path, kind: str) -> None:
    work = tmp_path / "work"
    _scripted(home, work, [_text("done")])
    settings = {"hooks": {"Stop": [{"hooks": [{"type": kind, "prompt": "ok?"}]}]}}
    done = run_once(["-p", "go", "--settings", json.dumps(settings)], b"", home=home, cwd=work)
    assert done.returncode == 2
    assert f'hooks.Stop[0].hooks[0].type "{kind}" is not supported by agentx' in (
        done.stderr.decode()
    )


def test_suppress_output_of_a_permission_request_hook(home: Path, tmp_path: Path) -> None:
    """The permission race's hooks write their records too; suppressOutput
    keeps the answering hook's stdout out of its hook_response."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    allow: Record = {
        "suppressOutput": True,
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        },
    }
    hooks.add("PermissionRequest", "request", answer(allow), matcher="Bash")
    done = run_once(
        ["-p", "go", "--output-format", "stream-json", "--include-hook-events", *hooks.flag()],
        b"",
        home=home,
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    assert (work / "made").exists()
    (response,) = [
        r
        for r in records_of(done.stdout)
        if r.get("subtype") == "hook_response" and r["hook_event"] == "PermissionRequest"
    ]
    assert (response["outcome"], response["stdout"], response["output"]) == ("success", "", "")


# -- the permission race's hooks: systemMessage, http failures --------------------------

ALLOW_REQUEST: Record = {
    "hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}
}


@pytest.mark.parametrize("profile", ["sdk", "extended", "standalone"])
def test_a_permission_request_hooks_system_message_is_shown(
    home: Path, tmp_path: Path, profile: str
) -> None:
    """DECISIONS section 3: a PermissionRequest hook's systemMessage is shown
    as every other hook's: a ``system/informational`` warning record for an
    SDK client, one INFO line in the standalone profile."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    hooks = Hooks(tmp_path / "hooks")
    shown_text = "REQUEST-SEEN"
    hooks.add(
        "PermissionRequest",
        "request",
        answer({**ALLOW_REQUEST, "systemMessage": shown_text}),
        matcher="Bash",
    )
    done = run_once(
        [*DUPLEX, "--control-profile", profile, *hooks.flag()],
        encode(user("go")),
        home=home,
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    assert (work / "made").exists()
    shown = [r for r in records_of(done.stdout) if r.get("subtype") == "informational"]
    stderr = done.stderr.decode()
    if profile == "standalone":
        assert shown == []
        assert f"agentx: INFO: PermissionRequest hook message: {shown_text}" in stderr
    else:
        assert [(r["content"], r["level"]) for r in shown] == [(shown_text, "warning")]
        assert shown_text not in stderr


def test_a_failing_http_permission_request_hook_says_what_failed(
    home: Path, tmp_path: Path
) -> None:
    """The permission race runs http hooks as the runner does, and a failed
    POST's WARN line says what failed (the status), not the POST child's exit
    status; the hook approved nothing."""
    work = tmp_path / "work"
    _scripted(home, work, [_bash("touch made"), _text("done")])
    with ProviderServer([_json_reply(ALLOW_REQUEST, status=500)]) as server:
        hook = _http_hook(server.url + "/hook")
        settings = {"hooks": {"PermissionRequest": [{"matcher": "Bash", "hooks": [hook]}]}}
        done = run_once(
            ["-p", "go", "--output-format", "stream-json", "--settings", json.dumps(settings)],
            b"",
            home=home,
            cwd=work,
        )
        (request,) = server.requests
    assert done.returncode == 0, done.stderr
    assert request.body["hook_event_name"] == "PermissionRequest"
    assert not (work / "made").exists()
    (warning,) = [ln for ln in done.stderr.decode().splitlines() if "hook 'http" in ln]
    assert warning.endswith("failed: http hook: status 500"), warning
