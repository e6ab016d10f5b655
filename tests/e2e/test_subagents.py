"""Subagents end to end over the real process and the loopback Messages API
model (DEC-TURN-3, DEC-CLI-5 ``--agents``, DEC-PROFILE-2): the parent's model
calls ``Agent``, the subagent's own model calls get their own scripted
answers, and each request the loopback server received is asserted: the
subagent's system prompt and tools, its records with ``parent_tool_use_id``,
its task records, its usage in the turn's result."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.agents.definitions import GENERAL_PURPOSE_PROMPT
from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    allow,
    control,
    encode,
    is_can_use_tool,
    is_result,
    log_lines,
    records_of,
    run_once,
    user,
    write_auth,
)
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
)

REVIEWER = {
    "reviewer": {
        "description": "Reviews code",
        "prompt": "You review code and say what is wrong.",
        "tools": ["Read", "Glob"],
    }
}


def _agent_call(
    kind: str | None = "reviewer", tool_use_id: str = "toolu_agent", **extra: Any
) -> Reply:
    call: dict[str, Any] = {"description": "Review the file", "prompt": "Review a.txt please"}
    if kind is not None:
        call["subagent_type"] = kind
    call.update(extra)
    return Reply(chunks=anthropic_tool_use("Agent", call, tool_use_id))


def _run(
    home: Path, cwd: Path, replies: list[Reply], *args: str, stdin: bytes | None = None
) -> tuple[list[dict[str, Any]], list[Any], str]:
    with ProviderServer(replies) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "m-1",
                    "api_key": "sk-test-subagents-1",
                    "endpoint": server.url,
                }
            ],
        )
        done = run_once([*DUPLEX, *args], stdin or encode(user("go")), home=home, cwd=cwd)
        requests = [r.body for r in server.requests]
    return records_of(done.stdout), requests, done.stderr.decode()


def _system(request: dict[str, Any]) -> str:
    system = request.get("system", "")
    if isinstance(system, list):
        return "".join(block["text"] for block in system)
    return str(system)


def _tools(request: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in request.get("tools", [])]


def test_a_subagent_runs_its_own_loop_and_reports_to_its_parent(home: Path, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    records, requests, stderr = _run(
        home,
        tmp_path,
        [
            _agent_call(),
            Reply(chunks=anthropic_tool_use("Read", {"file_path": "a.txt"}, "toolu_sub_read")),
            Reply(chunks=anthropic_text_stream("a.txt says hello")),
            Reply(chunks=anthropic_text_stream("all done")),
        ],
        "--agents",
        json.dumps(REVIEWER),
    )
    assert len(requests) == 4, stderr
    parent, sub_first, sub_second, parent_again = requests
    assert "Agent" in _tools(parent)
    assert "reviewer: Reviews code (Tools: Read, Glob)" in next(
        t["description"] for t in parent["tools"] if t["name"] == "Agent"
    )
    # The subagent's own context: its prompt, the environment, its tools only.
    system = _system(sub_first)
    assert system.startswith("You review code and say what is wrong.")
    assert f"Working directory: {tmp_path}" in system
    assert _tools(sub_first) == ["Glob", "Read"]
    assert sub_first["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Review a.txt please"}]}
    ]
    assert sub_second["messages"][-1]["content"][0]["tool_use_id"] == "toolu_sub_read"
    # The parent sees the subagent's final text as the Agent tool's result.
    result_block = parent_again["messages"][-1]["content"][0]
    assert result_block["tool_use_id"] == "toolu_agent"
    assert result_block["content"].startswith("a.txt says hello\n\nagentId: a")
    assert "<usage>total_tokens: 62\ntool_uses: 1\n" in result_block["content"]

    tagged = [r for r in records if r.get("parent_tool_use_id") == "toolu_agent"]
    assert [r["type"] for r in tagged] == ["assistant", "user"]
    # Without forwardSubagentText only its tool uses and results are written.
    assert tagged[0]["message"]["content"][0]["name"] == "Read"
    assert tagged[1]["message"]["content"][0]["tool_use_id"] == "toolu_sub_read"
    assert not any(
        b.get("text") == "a.txt says hello"
        for r in records
        if r["type"] == "assistant"
        for b in r["message"]["content"]
    )
    started = [r for r in records if r.get("subtype") == "task_started"]
    notified = [r for r in records if r.get("subtype") == "task_notification"]
    progress = [r for r in records if r.get("subtype") == "task_progress"]
    assert len(started) == len(notified) == 1
    assert started[0]["task_type"] == "local_agent"
    assert started[0]["subagent_type"] == "reviewer"
    assert started[0]["tool_use_id"] == "toolu_agent"
    assert started[0]["is_backgrounded"] is False
    assert notified[0]["task_id"] == started[0]["task_id"]
    assert notified[0]["status"] == "completed"
    assert notified[0]["usage"]["tool_uses"] == 1
    assert progress and progress[0]["last_tool_name"] == "Read"
    (result,) = [r for r in records if r["type"] == "result"]
    assert result["subtype"] == "success" and result["result"] == "all done"
    assert result["num_turns"] == 2
    # Four model calls' usage: the parent's two and the subagent's two.
    assert result["usage"]["input_tokens"] == 5 + 5 + 25 + 25


def test_general_purpose_is_built_in_and_forward_text_is_off_by_default(
    home: Path, tmp_path: Path
) -> None:
    records, requests, stderr = _run(
        home,
        tmp_path,
        [
            _agent_call(None),
            Reply(chunks=anthropic_text_stream("found it")),
            Reply(chunks=anthropic_text_stream("ok")),
        ],
        "--tools",
        "Read,Agent",
    )
    assert len(requests) == 3, stderr
    assert _system(requests[1]).startswith(GENERAL_PURPOSE_PROMPT)
    assert _tools(requests[0]) == ["Read", "Agent"]
    assert _tools(requests[1]) == ["Read"]
    init = next(r for r in records if r.get("subtype") == "init")
    assert init["tools"] == ["Read", "Agent"]


def test_a_subagent_asking_for_a_tool_its_parent_lacks_gets_a_tool_error(
    home: Path, tmp_path: Path
) -> None:
    """The definition names Bash, the parent has no Bash: the subagent is not
    offered it, and its call to Bash (or to Agent: nesting stops) is an error."""
    agents = {"x": {"description": "d", "prompt": "p", "tools": ["Bash", "Read"]}}
    records, requests, stderr = _run(
        home,
        tmp_path,
        [
            _agent_call("x"),
            Reply(chunks=anthropic_tool_use("Bash", {"command": "touch pwned"}, "toolu_bash")),
            Reply(
                chunks=anthropic_tool_use(
                    "Agent", {"description": "d", "prompt": "p"}, "toolu_nest"
                )
            ),
            Reply(chunks=anthropic_text_stream("could not")),
            Reply(chunks=anthropic_text_stream("ok")),
        ],
        "--tools",
        "Read,Agent",
        "--agents",
        json.dumps(agents),
        "--permission-mode",
        "bypassPermissions",
    )
    assert len(requests) == 5, stderr
    assert _tools(requests[1]) == ["Read"]
    assert not (tmp_path / "pwned").exists()
    results = {
        block["tool_use_id"]: block
        for request in requests[2:4]
        for block in request["messages"][-1]["content"]
    }
    assert results["toolu_bash"]["is_error"] is True
    assert "No such tool available: Bash" in results["toolu_bash"]["content"]
    assert "No such tool available: Agent" in results["toolu_nest"]["content"]
    started = [r for r in records if r.get("subtype") == "task_started"]
    assert len(started) == 1


def test_agents_flag_errors_end_the_start(home: Path, tmp_path: Path) -> None:
    for value, expected in (
        ("{", "--agents: not valid JSON"),
        ('{"x": {"prompt": "p"}}', "agent 'x' has no description"),
        ('{"x": {"description": "d", "prompt": "p", "skills": ["s"]}}', "'skills'"),
    ):
        done = run_once([*DUPLEX, "--agents", value], b"", home=home, cwd=tmp_path)
        assert done.returncode == 2
        assert expected in done.stderr.decode()


def _agent_file(folder: Path, name: str, body: str = "File prompt.") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(
        f"---\nname: {name}\ndescription: from a file\ntools: Read, Grep\n---\n{body}\n"
    )
    return path


def test_agent_files_and_hostile_ones(home: Path, tmp_path: Path) -> None:
    """Project files are read; a symlink out of the project, a FIFO and a file
    past the bound are each left out with one WARNING line; the session runs."""
    work = tmp_path / "work"
    agents = work / ".claude" / "agents"
    _agent_file(agents, "good")
    outside = _agent_file(tmp_path / "elsewhere", "escaped", "Secret prompt from outside.")
    (agents / "escaped.md").symlink_to(outside)
    os.mkfifo(agents / "fifo.md")
    big = agents / "big.md"
    with big.open("wb") as f:
        f.write(b"---\nname: big\ndescription: d\n---\n")
        f.truncate(100 * 1024 * 1024)
    _records, requests, stderr = _run(
        home,
        work,
        [
            _agent_call("good"),
            Reply(chunks=anthropic_text_stream("x")),
            Reply(chunks=anthropic_text_stream("ok")),
        ],
    )
    assert len(requests) == 3, stderr
    description = next(t["description"] for t in requests[0]["tools"] if t["name"] == "Agent")
    assert "good: from a file (Tools: Read, Grep)" in description
    assert "escaped" not in description and "big" not in description and "fifo" not in description
    assert _system(requests[1]).startswith("File prompt.")
    warnings = [line for line in log_lines(stderr) if "agent file" in line]
    assert len(warnings) == 3, warnings
    assert any("escaped.md" in line and "leads out of" in line for line in warnings)
    assert any("fifo.md" in line and "pipe" in line for line in warnings)
    assert any("big.md" in line and "larger than" in line for line in warnings)
    assert "Secret prompt" not in json.dumps(requests)


def test_precedence_flag_over_project_over_user(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    user_home = tmp_path / "userhome"
    _agent_file(user_home / ".claude" / "agents", "shared", "User prompt.")
    _agent_file(user_home / ".claude" / "agents", "mine", "Mine prompt.")
    _agent_file(work / ".claude" / "agents", "shared", "Project prompt.")
    flag = {"mine": {"description": "flag", "prompt": "Flag prompt."}}
    with ProviderServer(
        [
            _agent_call("shared", "toolu_1"),
            Reply(chunks=anthropic_text_stream("x")),
            _agent_call("mine", "toolu_2"),
            Reply(chunks=anthropic_text_stream("y")),
            Reply(chunks=anthropic_text_stream("ok")),
        ]
    ) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "m-1",
                    "api_key": "sk-test-sub-2",
                    "endpoint": server.url,
                }
            ],
        )
        done = run_once(
            [*DUPLEX, "--agents", json.dumps(flag)],
            encode(user("go")),
            home=home,
            cwd=work,
            env={"HOME": str(user_home)},
        )
        requests = [r.body for r in server.requests]
    assert len(requests) == 5, done.stderr
    assert _system(requests[1]).startswith("Project prompt.")
    assert _system(requests[3]).startswith("Flag prompt.")


@pytest.mark.parametrize("sources", ["project", "user"])
def test_setting_sources_select_the_agent_files(home: Path, tmp_path: Path, sources: str) -> None:
    work = tmp_path / "work"
    user_home = tmp_path / "userhome"
    _agent_file(user_home / ".claude" / "agents", "fromuser")
    _agent_file(work / ".claude" / "agents", "fromproject")
    with ProviderServer([Reply(chunks=anthropic_text_stream("ok"))]) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "m-1",
                    "api_key": "sk-test-sub-3",
                    "endpoint": server.url,
                }
            ],
        )
        run_once(
            [*DUPLEX, "--setting-sources", sources],
            encode(user("go")),
            home=home,
            cwd=work,
            env={"HOME": str(user_home)},
        )
        (request,) = [r.body for r in server.requests]
    description = next(t["description"] for t in request["tools"] if t["name"] == "Agent")
    assert ("fromuser:" in description) is (sources == "user")
    assert ("fromproject:" in description) is (sources == "project")


def _loopback_auth(home: Path, server: ProviderServer) -> None:
    write_auth(
        home,
        [
            {
                "id": "a",
                "type": "anthropic",
                "model": "m-1",
                "api_key": "sk-test-subagents-9",
                "endpoint": server.url,
            }
        ],
    )


def test_an_interrupt_during_a_subagent_ends_it_and_the_turn(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    with ProviderServer([_agent_call(None), Reply(chunks=(), then="hang")]) as server:
        _loopback_auth(home, server)
        proc = AgentxProcess(home=home, cwd=tmp_path)
        processes.append(proc)
        proc.send(user("go"))
        assert server.hanging.wait(30)
        proc.send(control("int-1", "interrupt"))
        got = proc.until(is_result)
        proc.close_stdin()
        rest = proc.rest()
        assert proc.wait() == 1
    records = got + rest
    (result,) = [r for r in records if r["type"] == "result"]
    assert result["subtype"] == "error_during_execution"
    assert "Interrupted by user" in result["errors"]
    (note,) = [r for r in records if r.get("subtype") == "task_notification"]
    assert note["status"] == "stopped" and note["tool_use_id"] == "toolu_agent"
    answered = [
        b
        for r in records
        if r["type"] == "user" and r.get("parent_tool_use_id") is None
        for b in r["message"]["content"]
        if b.get("tool_use_id") == "toolu_agent"
    ]
    assert len(answered) == 1 and answered[0]["is_error"] is True
    assert any(
        r["type"] == "control_response" and r["response"]["request_id"] == "int-1" for r in records
    )


def test_a_subagents_permission_ask_goes_through_the_one_arbiter(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    """One can_use_tool request for the subagent's Bash, with the subagent's
    tool-use id and nothing else added (WIRE-PERM-021's closed record)."""
    replies = [
        _agent_call(None),
        Reply(
            chunks=anthropic_tool_use("Bash", {"command": "echo hi > out.txt"}, "toolu_sub_bash")
        ),
        Reply(chunks=anthropic_text_stream("wrote it")),
        Reply(chunks=anthropic_text_stream("ok")),
    ]
    with ProviderServer(replies) as server:
        _loopback_auth(home, server)
        proc = AgentxProcess(home=home, cwd=tmp_path)
        processes.append(proc)
        proc.send(user("go"))
        asks = [r for r in proc.until(is_can_use_tool) if is_can_use_tool(r)]
        request = asks[-1]["request"]
        assert request["tool_name"] == "Bash"
        assert request["tool_use_id"] == "toolu_sub_bash"
        assert set(request) <= {
            "subtype",
            "tool_name",
            "input",
            "tool_use_id",
            "description",
            "permission_suggestions",
            "blocked_path",
        }
        proc.send(allow(asks[-1]))
        got = proc.until(is_result)
        proc.close_stdin()
        proc.rest()
        proc.wait()
    assert (tmp_path / "out.txt").read_text() == "hi\n"
    assert sum(1 for r in proc.seen if is_can_use_tool(r)) == 1
    (result,) = [r for r in got if r["type"] == "result"]
    assert result["subtype"] == "success"


def test_subagent_hooks_fire_and_subagent_stop_makes_it_go_on(home: Path, tmp_path: Path) -> None:
    """Settings command hooks: SubagentStart adds context to the subagent's
    first message; SubagentStop blocks once (stop_hook_active false), the
    subagent goes on with the reason, then stops (stop_hook_active true); a
    PreToolUse hook inside the subagent sees agent_id and agent_type."""
    hooks_dir = tmp_path / "hooks"
    hooks_dir.mkdir()

    def script(name: str, body: str) -> str:
        path = hooks_dir / f"{name}.sh"
        log = hooks_dir / f"{name}.jsonl"
        path.write_text(f'#!/bin/sh\n{{ cat; echo; }} >> "{log}"\n{body}\n')
        path.chmod(0o755)
        return str(path)

    start = script(
        "start",
        "echo '"
        + json.dumps(
            {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "CTX-1"}}
        )
        + "'",
    )
    stop = script(
        "stop",
        'if [ -e "$0.seen" ]; then exit 0; fi\n'
        'touch "$0.seen"; echo \''
        + json.dumps({"decision": "block", "reason": "CHECK AGAIN"})
        + "'",
    )
    pre = script("pre", "exit 0")
    settings = {
        "hooks": {
            "SubagentStart": [{"hooks": [{"type": "command", "command": start}]}],
            "SubagentStop": [
                {"matcher": "general-purpose", "hooks": [{"type": "command", "command": stop}]}
            ],
            "PreToolUse": [{"matcher": "Glob", "hooks": [{"type": "command", "command": pre}]}],
        }
    }
    (tmp_path / "a.txt").write_text("x")
    _records, requests, stderr = _run(
        home,
        tmp_path,
        [
            _agent_call(None),
            Reply(chunks=anthropic_tool_use("Glob", {"pattern": "*.txt"}, "toolu_glob")),
            Reply(chunks=anthropic_text_stream("first answer")),
            Reply(chunks=anthropic_text_stream("second answer")),
            Reply(chunks=anthropic_text_stream("ok")),
        ],
        "--settings",
        json.dumps(settings),
    )
    assert len(requests) == 5, stderr
    first = requests[1]["messages"][0]["content"]
    assert [b["text"] for b in first] == ["Review a.txt please", "CTX-1"]
    assert "CHECK AGAIN" in json.dumps(requests[3]["messages"][-1])
    parent_result = requests[4]["messages"][-1]["content"][0]["content"]
    assert parent_result.startswith("second answer")

    def logged(name: str) -> list[dict[str, Any]]:
        path = hooks_dir / f"{name}.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    (started,) = logged("start")
    assert started["hook_event_name"] == "SubagentStart"
    assert started["agent_type"] == "general-purpose"
    assert started["agent_id"].startswith("a")
    stops = logged("stop")
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    assert {s["agent_id"] for s in stops} == {started["agent_id"]}
    assert stops[0]["last_assistant_message"] == "first answer"
    assert "agent_transcript_path" in stops[0]
    (pre_input,) = logged("pre")
    assert pre_input["agent_id"] == started["agent_id"]
    assert pre_input["agent_type"] == "general-purpose"


def test_subagent_stop_continuations_are_bounded(home: Path, tmp_path: Path) -> None:
    """A SubagentStop hook that always blocks: the subagent goes on exactly
    MAX_STOP_CONTINUATIONS times, then its last answer is the result."""
    from agentx.messages.agents.loop import MAX_STOP_CONTINUATIONS

    block = tmp_path / "block.sh"
    block.write_text(
        '#!/bin/sh\ncat >/dev/null\necho \'{"decision": "block", "reason": "more"}\'\n'
    )
    block.chmod(0o755)
    settings = {
        "hooks": {"SubagentStop": [{"hooks": [{"type": "command", "command": str(block)}]}]}
    }
    answers = [
        Reply(chunks=anthropic_text_stream(f"answer {i}"))
        for i in range(MAX_STOP_CONTINUATIONS + 1)
    ]
    _records, requests, stderr = _run(
        home,
        tmp_path,
        [_agent_call(None), *answers, Reply(chunks=anthropic_text_stream("ok"))],
        "--settings",
        json.dumps(settings),
    )
    assert len(requests) == MAX_STOP_CONTINUATIONS + 3, stderr
    final = requests[-1]["messages"][-1]["content"][0]["content"]
    assert final.startswith(f"answer {MAX_STOP_CONTINUATIONS}\n")


BACKGROUND = {"bg": {"description": "Works in the background", "prompt": "SUB: you work alone."}}


def _route(body: Any) -> str | None:
    """The subagent's requests by their system prompt; the parent's in order."""
    system = body.get("system", "") if isinstance(body, dict) else ""
    text = system if isinstance(system, str) else "".join(b.get("text", "") for b in system)
    return "sub" if text.startswith("SUB:") else None


def _bg_call() -> Reply:
    call = {
        "description": "Background work",
        "prompt": "Count the files",
        "subagent_type": "bg",
        "run_in_background": True,
    }
    return Reply(chunks=anthropic_tool_use("Agent", call, "toolu_bg"))


def test_a_background_subagent_reports_before_the_turn_ends(home: Path, tmp_path: Path) -> None:
    """The Agent tool answers at once; the parent's model goes on; before the
    turn ends its notification reaches the model, and the result waits."""
    parent = [
        _bg_call(),
        Reply(chunks=anthropic_text_stream("waiting for it")),
        Reply(chunks=anthropic_text_stream("final")),
    ]
    sub = [Reply(chunks=anthropic_text_stream("there are 3 files"))]
    with ProviderServer(parent, routes={"sub": sub}, route=_route) as server:
        _loopback_auth(home, server)
        done = run_once(
            [*DUPLEX, "--agents", json.dumps(BACKGROUND)],
            encode(user("go")) + encode(user("/cost")),
            home=home,
            cwd=tmp_path,
        )
        requests = [r.body for r in server.requests]
    records = records_of(done.stdout)
    assert done.returncode == 0, done.stderr
    parents = [r for r in requests if _route(r) is None]
    subs = [r for r in requests if _route(r) == "sub"]
    assert len(parents) == 3 and len(subs) == 1
    launched = parents[1]["messages"][-1]["content"][0]
    assert launched["tool_use_id"] == "toolu_bg"
    assert launched["content"].startswith("Async agent launched: agentId: a")
    notice = parents[2]["messages"][-1]["content"][0]["text"]
    assert notice.startswith("<task-notification>")
    assert "<status>completed</status>" in notice
    assert "<result>there are 3 files\n\nagentId: " in notice
    kinds = [(r["type"], r.get("subtype")) for r in records]
    started = kinds.index(("system", "task_started"))
    notified = kinds.index(("system", "task_notification"))
    result = kinds.index(("result", "success"))
    assert started < notified < result
    assert records[started]["is_backgrounded"] is True
    assert records[result]["result"] == "final"
    # The background run's usage joined the turn: four model calls.
    assert records[result]["usage"]["input_tokens"] == 5 + 25 + 25 + 25
    # ... and the session's totals (/cost), on the parent's thread.
    (cost,) = [r["content"] for r in records if r.get("subtype") == "local_command_output"]
    assert "Usage (m-1): 80 input, 54 output, 15 cache read, 9 cache write tokens" in cost


def test_stop_task_stops_a_background_subagent(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    parent = [
        _bg_call(),
        Reply(chunks=anthropic_text_stream("waiting")),
        Reply(chunks=anthropic_text_stream("it was stopped")),
    ]
    sub = [Reply(chunks=(), then="hang")]
    with ProviderServer(parent, routes={"sub": sub}, route=_route) as server:
        _loopback_auth(home, server)
        proc = AgentxProcess(
            [*DUPLEX, "--control-profile", "extended", "--agents", json.dumps(BACKGROUND)],
            home=home,
            cwd=tmp_path,
        )
        processes.append(proc)
        proc.send(user("go"))
        started = proc.until(lambda r: r.get("subtype") == "task_started")[-1]
        assert server.hanging.wait(30)
        proc.send(control("stop-1", "stop_task", task_id=started["task_id"]))
        got = proc.until(is_result)
        proc.close_stdin()
        proc.rest()
        assert proc.wait() == 0
    (note,) = [r for r in got if r.get("subtype") == "task_notification"]
    assert note["status"] == "stopped" and note["task_id"] == started["task_id"]
    acks = [r for r in got if r["type"] == "control_response"]
    assert acks and acks[0]["response"]["subtype"] == "success"
    (result,) = [r for r in got if r["type"] == "result"]
    assert result["subtype"] == "success" and result["result"] == "it was stopped"
    last = [r.body for r in server.requests if _route(r.body) is None][-1]
    assert "<status>stopped</status>" in last["messages"][-1]["content"][0]["text"]


def test_a_subagents_tool_progress_carries_its_parent(home: Path, tmp_path: Path) -> None:
    """tool_progress of a subagent's tool that runs past a second names the
    Agent tool use as its parent (the command's own run is the wait)."""
    records, requests, stderr = _run(
        home,
        tmp_path,
        [
            _agent_call(None),
            Reply(chunks=anthropic_tool_use("Bash", {"command": "sleep 1.5"}, "toolu_slow")),
            Reply(chunks=anthropic_text_stream("slept")),
            Reply(chunks=anthropic_text_stream("ok")),
        ],
        "--permission-mode",
        "bypassPermissions",
    )
    assert len(requests) == 4, stderr
    progress = [r for r in records if r["type"] == "tool_progress"]
    assert progress, stderr
    assert {(r["tool_use_id"], r["parent_tool_use_id"]) for r in progress} == {
        ("toolu_slow", "toolu_agent")
    }


def _many_tool_uses(name: str, inputs: list[dict[str, Any]]) -> tuple[bytes, ...]:
    """One Messages API message with several tool uses."""
    from tests.fakes.provider_server import anthropic_event

    start = {
        "type": "message_start",
        "message": {
            "id": "msg_many",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    }
    events = [anthropic_event(start)]
    for index, tool_input in enumerate(inputs):
        block = {"type": "tool_use", "id": f"toolu_{index}", "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(tool_input)}
        events += [
            anthropic_event(
                {"type": "content_block_start", "index": index, "content_block": block}
            ),
            anthropic_event({"type": "content_block_delta", "index": index, "delta": delta}),
            anthropic_event({"type": "content_block_stop", "index": index}),
        ]
    events += [
        anthropic_event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 9},
            }
        ),
        anthropic_event({"type": "message_stop"}),
    ]
    return tuple(events)


def test_background_subagents_are_bounded_at_the_limit_and_one_past(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    """MAX_BACKGROUND subagents held running (their streams wait on a gate
    the test opens): the next Agent call in the same message is an error."""
    import threading

    from agentx.messages.agents.loop import MAX_BACKGROUND

    calls = [
        {
            "description": f"job {i}",
            "prompt": f"job {i}",
            "subagent_type": "bg",
            "run_in_background": True,
        }
        for i in range(MAX_BACKGROUND + 1)
    ]
    parent = [
        Reply(chunks=_many_tool_uses("Agent", calls)),
        Reply(chunks=anthropic_text_stream("waiting")),
        Reply(chunks=anthropic_text_stream("final")),
    ]
    gate = threading.Semaphore(0)
    stream = anthropic_text_stream("job done")
    sub = [Reply(chunks=stream, chunk_gate=gate)]
    with ProviderServer(parent, routes={"sub": sub}, route=_route) as server:
        _loopback_auth(home, server)
        proc = AgentxProcess([*DUPLEX, "--agents", json.dumps(BACKGROUND)], home=home, cwd=tmp_path)
        processes.append(proc)
        proc.send(user("go"))
        answered = proc.until(
            lambda r: (
                r["type"] == "user"
                and any(
                    b.get("tool_use_id") == f"toolu_{MAX_BACKGROUND}"
                    for b in r["message"]["content"]
                )
            )
        )
        for _ in range(MAX_BACKGROUND * (len(stream) - 1)):
            gate.release()
        got = answered + proc.until(is_result)
        proc.close_stdin()
        proc.rest()
        assert proc.wait() == 0
        requests = [r.body for r in server.requests]
    parents = [r for r in requests if _route(r) is None]
    assert len(parents) == 3 and len(requests) == 3 + MAX_BACKGROUND
    answers = {b["tool_use_id"]: b for b in parents[1]["messages"][-1]["content"]}
    last = answers[f"toolu_{MAX_BACKGROUND}"]
    assert last["is_error"] is True
    assert f"{MAX_BACKGROUND} background agents are already running" in last["content"]
    assert all(
        answers[f"toolu_{i}"]["content"].startswith("Async agent launched")
        for i in range(MAX_BACKGROUND)
    )
    started = [r for r in got if r.get("subtype") == "task_started"]
    notified = [r for r in got if r.get("subtype") == "task_notification"]
    assert len(started) == len(notified) == MAX_BACKGROUND
    notices = parents[2]["messages"][-1]["content"][0]["text"]
    assert notices.count("<status>completed</status>") == MAX_BACKGROUND
    (result,) = [r for r in got if r["type"] == "result"]
    assert result["result"] == "final"


def test_a_permission_request_hook_inside_a_subagent_names_it(home: Path, tmp_path: Path) -> None:
    """DEC-HOOK-2: a PermissionRequest hook fired by a subagent's tool use
    carries ``agent_id`` and ``agent_type``, as its PreToolUse hook's input
    does; one fired by the session's own tool use carries neither."""
    hooks_dir = tmp_path / "hooks"
    hooks_dir.mkdir()
    allow_all = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow"},
            }
        }
    )

    def script(name: str, body: str) -> str:
        path = hooks_dir / f"{name}.sh"
        path.write_text(f'#!/bin/sh\n{{ cat; echo; }} >> "{hooks_dir / name}.jsonl"\n{body}\n')
        path.chmod(0o755)
        return str(path)

    request, pre = script("request", f"echo '{allow_all}'"), script("pre", "exit 0")
    settings = {
        "hooks": {
            "PermissionRequest": [{"hooks": [{"type": "command", "command": request}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": pre}]}],
        }
    }
    _records, requests, stderr = _run(
        home,
        tmp_path,
        [
            _agent_call(None),
            Reply(chunks=anthropic_tool_use("Bash", {"command": "touch by-agent"}, "toolu_sub")),
            Reply(chunks=anthropic_text_stream("made it")),
            Reply(chunks=anthropic_tool_use("Bash", {"command": "touch by-parent"}, "toolu_top")),
            Reply(chunks=anthropic_text_stream("ok")),
        ],
        "--settings",
        json.dumps(settings),
    )
    assert len(requests) == 5, stderr
    assert (tmp_path / "by-agent").exists() and (tmp_path / "by-parent").exists()

    def logged(name: str) -> list[dict[str, Any]]:
        lines = (hooks_dir / f"{name}.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    inside, outside = logged("request")
    pre_inside, pre_outside = logged("pre")
    assert (inside["tool_use_id"], outside["tool_use_id"]) == ("toolu_sub", "toolu_top")
    assert inside["agent_id"] == pre_inside["agent_id"] and inside["agent_id"].startswith("a")
    assert inside["agent_type"] == pre_inside["agent_type"] == "general-purpose"
    assert "agent_id" not in outside and "agent_type" not in outside
    assert "agent_id" not in pre_outside
