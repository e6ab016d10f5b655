"""End-to-end: background tasks over the real process (DEC-TURN-3,
DEC-TURN-5, WIRE-004, DEC-PROFILE-1 ``stop_task``; scenarios 9, 12
and 15).

Every background task is a real shell command that blocks on a fifo the test
controls, so the order of events is decided by the test, never by a sleep.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from agentx.sessions.event_log import EVENTS_FILE_NAME, read_events
from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    Record,
    agentx_command,
    allow,
    base_env,
    control,
    is_can_use_tool,
    is_control_response,
    is_result,
    is_state,
    scripted_session,
    user,
    write_auth,
    write_script,
)

FIFO_TIMEOUT = 20.0


def _fifo(tmp_path: Path, name: str = "gate") -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


def _release(fifo: Path) -> None:
    """Open the fifo for writing (the task's ``read`` is its reader) and send a line."""
    fd = os.open(fifo, os.O_WRONLY)
    try:
        os.write(fd, b"go\n")
    finally:
        os.close(fd)


def _background(command: str, description: str = "gated task") -> Record:
    return {
        "tool_use": {
            "name": "Bash",
            "input": {"command": command, "description": description, "run_in_background": True},
        }
    }


def _gated(fifo: Path) -> str:
    return f"printf 'step 1\\n'; read line < {fifo}; printf 'done\\n'"


def _subtype(name: str) -> Any:
    return lambda record: record.get("subtype") == name


def _named(records: list[Record]) -> list[str]:
    """The scenario 9 / 12 vocabulary, in stream order."""
    names = []
    for record in records:
        kind = record.get("subtype") if record["type"] == "system" else record["type"]
        if kind in ("task_progress", "task_notification", "result", "prompt_suggestion"):
            names.append(kind)
        elif is_state("idle")(record):
            names.append("idle")
    return names


def test_scenario_9_progress_notification_result_suggestion_idle(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    """Scenario 9 / DEC-TURN-5: a turn that ends normally while its background
    task runs holds its result until the task drains: task progress, task
    notification, result, suggestion and idle, in that exact order."""
    fifo = _fifo(tmp_path)
    turns = [{"steps": [_background(_gated(fifo))]}, {"steps": [{"text": "all done"}]}]
    proc = scripted_session(
        home,
        turns,
        processes,
        "--prompt-suggestions",
        "--permission-mode",
        "bypassPermissions",
        suggestions=("ship it",),
    )
    proc.send(user("build in the background"))
    started = proc.until(_subtype("task_started"))[-1]
    # A second after the start: the turn's answer is long written by now.
    progress = proc.until(_subtype("task_progress"))[-1]
    assert progress["summary"] == "step 1"
    proc.send(control("usage-1", "get_context_usage"))
    proc.until(is_control_response("usage-1"))
    assert not [r for r in proc.seen if is_result(r)]
    assert "all done" in json.dumps([r for r in proc.seen if r["type"] == "assistant"])
    _release(fifo)
    tail = proc.until(is_state("idle"))
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0

    names = _named(proc.seen[proc.seen.index(started) :])
    progress_count = names.count("task_progress")
    assert progress_count >= 1
    tail_names = ["task_notification", "result", "prompt_suggestion", "idle"]
    assert names == ["task_progress"] * progress_count + tail_names
    notification = next(r for r in tail if r.get("subtype") == "task_notification")
    assert started["tool_use_id"] == notification["tool_use_id"]
    assert started["task_type"] == "local_bash"
    assert notification["status"] == "completed"
    assert notification["task_id"] == started["task_id"]
    assert Path(notification["output_file"]).read_text() == "step 1\ndone\n"
    assert notification["output_file"].startswith(str(home / "sessions"))
    (result,) = [r for r in tail if is_result(r)]
    assert (result["subtype"], result["result"]) == ("success", "all done")
    (suggestion,) = [r for r in tail if r["type"] == "prompt_suggestion"]
    assert suggestion["suggestion"] == "ship it"


def test_the_hold_waits_for_a_permission_answer_too(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    """Scenario 9 with the turn's second tool waiting on the host's answer,
    given only after the task's notification: the order is the same."""
    fifo = _fifo(tmp_path)
    turns = [
        {"steps": [_background(_gated(fifo))]},
        {"steps": [{"tool_use": {"name": "Bash", "input": {"command": "echo checked"}}}]},
        {"steps": [{"text": "all done"}]},
    ]
    proc = scripted_session(
        home, turns, processes, "--prompt-suggestions", suggestions=("ship it",)
    )
    proc.send(user("build in the background"))
    proc.send(allow(proc.until(is_can_use_tool)[-1]))  # the background Bash
    proc.until(_subtype("task_started"))
    second = proc.until(is_can_use_tool)[-1]  # the foreground Bash waits on us
    progress = proc.until(_subtype("task_progress"))[-1]
    _release(fifo)
    proc.until(_subtype("task_notification"))
    proc.send(allow(second))
    proc.until(is_state("idle"))
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    names = _named(proc.seen[proc.seen.index(progress) :])
    tail_names = ["task_notification", "result", "prompt_suggestion", "idle"]
    assert names == ["task_progress"] * names.count("task_progress") + tail_names


def test_scenario_12_task_part_interrupted_result_waits_for_finite_tasks(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    """Scenario 12 (task part): after the interrupt acknowledgement the ordinary
    result is held until the finite task's terminal events are out, and idle
    follows the internal-event flush."""
    fifo = _fifo(tmp_path)
    turns = [
        {"steps": [_background(_gated(fifo))]},
        {"steps": [{"sleep_ms": 60_000}, {"text": "never"}]},
    ]
    proc = scripted_session(home, turns, processes, "--permission-mode", "bypassPermissions")
    proc.send(user("start then think"))
    proc.until(_subtype("task_started"))
    proc.until(lambda r: r["type"] == "tool_use_summary")  # the model call is next
    proc.send(control("int-1", "interrupt"))
    proc.until(is_control_response("int-1"))
    # A control round trip after the acknowledgement: the held result must
    # not have been written while the task still runs.
    proc.send(control("usage-1", "get_context_usage"))
    between = proc.until(is_control_response("usage-1"))
    assert not [r for r in between if is_result(r)]
    _release(fifo)
    after = proc.until(is_state("idle"))
    events = read_events(next((home / "sessions").iterdir()) / EVENTS_FILE_NAME)
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 1  # DEC-CLI-6: the last turn ended in error

    names = _named(between + after)
    assert names[-3:] == ["task_notification", "result", "idle"]
    assert set(names[:-3]) <= {"task_progress"}
    (result,) = [r for r in after if is_result(r)]
    assert result["subtype"] == "error_during_execution"
    # Scenario 15 (WIRE-004): the flush before idle holds the turn's end, and
    # says nothing of delivery.
    assert {"type": "turn_end", "result_uuid": result["uuid"]}.items() <= events[-1].items()
    assert all("deliver" not in json.dumps(e) and "ack" not in json.dumps(e) for e in events)


def test_stop_task_unknown_running_and_ended(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    """DEC-PROFILE-1 stop_task: an unknown id is a correlated error; a running
    task is stopped (success, then its ``stopped`` notification, then idle);
    a second stop is an error. The turn's result waits for the task
    (DEC-TURN-5) and idle follows it (WIRE-004)."""
    fifo = _fifo(tmp_path)
    turns = [{"steps": [_background(f"read line < {fifo}", "waits forever")]}, {"steps": []}]
    extra = ("--permission-mode", "bypassPermissions", "--control-profile", "extended")
    proc = scripted_session(home, turns, processes, *extra)
    proc.send(user("start a waiter"))
    started = proc.until(_subtype("task_started"))[-1]
    proc.send(control("stop-0", "stop_task", task_id="task_unknown"))
    unknown = proc.until(is_control_response("stop-0"))[-1]
    assert unknown["response"]["subtype"] == "error"
    assert "task_unknown" in unknown["response"]["error"]
    proc.send(control("stop-1", "stop_task", task_id=started["task_id"]))
    stopped = proc.until(is_state("idle"))
    names = [r.get("subtype") or r["type"] for r in stopped]
    assert names.index("control_response") < names.index("task_notification")
    assert names.index("task_notification") < names.index("success")  # the result
    (notification,) = [r for r in stopped if r.get("subtype") == "task_notification"]
    assert notification["status"] == "stopped"
    assert "was stopped" in notification["summary"]
    proc.send(control("stop-2", "stop_task", task_id=started["task_id"]))
    again = proc.until(is_control_response("stop-2"))[-1]
    assert again["response"]["subtype"] == "error"
    assert "not running (stopped)" in again["response"]["error"]
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    # Never idle before the task ended.
    idle_at = [i for i, r in enumerate(proc.seen) if is_state("idle")(r)]
    assert idle_at and idle_at[0] > proc.seen.index(notification)


def test_stop_task_is_not_in_the_standalone_profile(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = scripted_session(home, [], processes)
    proc.send(control("stop-1", "stop_task", task_id="task_x"))
    reply = proc.until(is_control_response("stop-1"))[-1]
    assert reply["response"] == {
        "subtype": "error",
        "request_id": "stop-1",
        "error": 'unsupported control request "stop_task"',
    }
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0


def test_failed_task_and_the_timeout_bounds_the_hold_at_eof(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    """A non-zero exit is ``failed``. DEC-TURN-5: input ends while the turn's
    result waits for a task that would run forever; the task's own timeout
    (1.5 s here) kills it, reported ``failed (timed out)``, and only then come
    the result and the final idle."""
    fifo = _fifo(tmp_path)
    waiter = _background(f"read line < {fifo}", "outlives the input")
    waiter["tool_use"]["input"]["timeout"] = 1_500
    turns = [
        {"steps": [_background("printf 'bad\\n'; exit 3", "fails"), waiter]},
        {"steps": [{"text": "ok"}]},
    ]
    proc = scripted_session(home, turns, processes, "--permission-mode", "bypassPermissions")
    proc.send(user("two tasks"))
    failed = proc.until(lambda r: r.get("subtype") == "task_notification")[-1]
    proc.close_stdin()
    rest = proc.rest()
    assert proc.wait() == 0
    assert failed["status"] == "failed"
    assert failed["summary"] == 'Background command "fails" failed (exit code 3): bad'
    assert not [r for r in proc.seen[: proc.seen.index(failed)] if is_result(r)]
    names = _named(rest)
    assert names[-3:] == ["task_notification", "result", "idle"]
    (timed_out,) = [r for r in rest if r.get("subtype") == "task_notification"]
    assert timed_out["status"] == "failed"
    assert "failed (timed out)" in timed_out["summary"]


def test_without_persistence_output_goes_to_a_temp_directory(
    home: Path, processes: list[AgentxProcess]
) -> None:
    turns = [{"steps": [_background("printf 'hi\\n'", "says hi")]}, {"steps": []}]
    extra = ("--permission-mode", "bypassPermissions", "--no-session-persistence")
    proc = scripted_session(home, turns, processes, *extra)
    proc.send(user("greet"))
    notification = proc.until(_subtype("task_notification"))[-1]
    output = Path(notification["output_file"])
    assert output.parent.parent == Path(tempfile.gettempdir()) / f"agentx-tasks-{os.getuid()}"
    assert output.read_text() == "hi\n"  # readable while the session runs
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    assert not output.parent.exists()  # and gone with it: nothing stays on disk
    assert not (home / "sessions").exists() or not any((home / "sessions").iterdir())


def test_eof_terminates_a_task_that_ignores_term_and_its_children(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    """DEC-TURN-5 and DECISIONS section 8: at the end of input the turn's
    result waits for its task, which ignores SIGTERM and waits on a background
    ``sleep``; the task's own timeout (1.5 s) kills the whole group, the task
    reports ``failed (timed out)``, then the result, and both processes are
    gone."""
    fifo = _fifo(tmp_path, "pids")
    command = f"trap '' TERM; sleep 300 & {{ echo $$; echo $!; }} > {fifo}; wait"
    task = _background(command, "ignores TERM")
    task["tool_use"]["input"]["timeout"] = 1_500
    turns = [{"steps": [task]}, {"steps": []}]
    proc = scripted_session(home, turns, processes, "--permission-mode", "bypassPermissions")
    proc.send(user("start it"))
    with fifo.open() as pipe:
        pids = [int(pipe.readline()) for _ in range(2)]
    proc.close_stdin()
    rest = proc.rest()
    assert proc.wait() == 0
    assert _named(rest)[-3:] == ["task_notification", "result", "idle"]
    (ended,) = [r for r in rest if r.get("subtype") == "task_notification"]
    assert ended["status"] == "failed" and "failed (timed out)" in ended["summary"]
    for pid in pids:
        assert _terminated(pid)


def test_a_session_that_ends_under_a_running_task_sends_it_sigterm_first(
    home: Path, tmp_path: Path
) -> None:
    """DECISIONS section 8: the session's child registry TERMs a task's group
    before anything KILLs it; the task's trap sees the SIGTERM. At the end of
    input the result waits for the task (DEC-TURN-5), so the session is ended
    under the running task by an output failure: stdout's reader goes away,
    the next task_progress fails to write, exit 3."""
    fifo = _fifo(tmp_path, "pids")
    marker = tmp_path / "got-term"
    command = f"trap 'echo TERM > {marker}' TERM; sleep 300 & echo $! > {fifo}; wait"
    turns = [{"steps": [_background(command, "traps TERM")]}, {"steps": []}]
    write_script(home / "script.json", turns)
    script = str(home / "script.json")
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": script}])
    args = (*DUPLEX, "--permission-mode", "bypassPermissions")
    proc = subprocess.Popen(
        [*agentx_command(), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=base_env(home),
        cwd=tmp_path,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(user("start it")).encode() + b"\n")
        proc.stdin.flush()
        with fifo.open() as pipe:
            sleep = int(pipe.readline())
        while b'"task_started"' not in proc.stdout.readline():
            pass
        proc.stdout.close()
        assert proc.wait(FIFO_TIMEOUT) == 3
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _terminated(sleep)
    assert marker.read_text() == "TERM\n"


def _terminated(pid: int) -> bool:
    """Whether ``pid`` has terminated within 10 s, seen through its pidfd (a
    zombie counts: PID 1 in a container may never reap an orphan)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], 10.0)
    finally:
        os.close(fd)
    return bool(readable)
