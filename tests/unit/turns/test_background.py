"""The background command IO (DEC-TURN-3): a real shell in its own process
group writing a bounded output file; the internal-event log (WIRE-004); the
suggestion text bound (DEC-TURN-5)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agentx.sessions.event_log import InternalEventLog, read_events
from agentx.tools.process import ChildProcesses
from agentx.turns.background import MAX_OUTPUT_FILE_BYTES, BackgroundCommand
from agentx.turns.suggestions import MAX_SUGGESTION_CHARS, first_line

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def run_to_end(cmd: BackgroundCommand, now: float = 0.0) -> str:
    text = ""
    while not cmd.done:
        text += cmd.pump(1.0, now)
    return text


def start(tmp_path: Path, command: str, timeout_ms: int = 60_000) -> BackgroundCommand:
    return BackgroundCommand(
        command,
        cwd=tmp_path,
        env=ENV,
        output_file=tmp_path / "tasks" / "t.output",
        timeout_ms=timeout_ms,
        now=0.0,
        children=ChildProcesses(),
    )


@pytest.mark.parametrize(
    ("command", "exit_code", "output"),
    [
        pytest.param("printf 'a\\nb\\n'", 0, "a\nb\n", id="ok"),
        pytest.param("printf 'err\\n' >&2; exit 7", 7, "err\n", id="stderr-merged-exit-7"),
        pytest.param("kill -TERM $$", -15, "", id="signal"),
    ],
)
def test_output_goes_to_the_file_and_the_exit_is_kept(
    tmp_path: Path, command: str, exit_code: int, output: str
) -> None:
    cmd = start(tmp_path, command)
    assert run_to_end(cmd) == output
    assert cmd.exit_code == exit_code
    assert (tmp_path / "tasks" / "t.output").read_text() == output


@pytest.mark.parametrize(
    ("size", "kept", "note"),
    [
        pytest.param(MAX_OUTPUT_FILE_BYTES, MAX_OUTPUT_FILE_BYTES, False, id="at-limit"),
        pytest.param(MAX_OUTPUT_FILE_BYTES + 1, MAX_OUTPUT_FILE_BYTES, True, id="one-past-limit"),
    ],
)
def test_output_file_is_bounded(tmp_path: Path, size: int, kept: int, note: bool) -> None:
    cmd = start(tmp_path, f"head -c {size} /dev/zero")
    run_to_end(cmd)
    data = (tmp_path / "tasks" / "t.output").read_bytes()
    assert data[:kept] == b"\0" * kept
    tail = data[kept:].decode()
    assert (tail == "\n[output truncated: 1 more bytes were not kept]\n") is note
    assert (tail == "") is not note


def test_deadline_kills_the_group_and_reports_no_exit_code(tmp_path: Path) -> None:
    """The deadline is checked against the time handed in: no waiting in the test."""
    fifo = tmp_path / "gate"
    os.mkfifo(fifo)
    cmd = start(tmp_path, f"sleep 100 & read line < {fifo}", timeout_ms=1_000)
    cmd.pump(0.0, now=0.999)
    assert not cmd.done
    run_to_end(cmd, now=1.0)
    assert cmd.timed_out and cmd.exit_code is None


def test_kill_from_another_party_ends_the_command(tmp_path: Path) -> None:
    fifo = tmp_path / "gate"
    os.mkfifo(fifo)
    cmd = start(tmp_path, f"read line < {fifo}")
    cmd.kill()
    run_to_end(cmd)
    assert cmd.exit_code == -9


def test_start_failure_leaves_no_open_file(tmp_path: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError):
        BackgroundCommand(
            "true",
            cwd=tmp_path / "missing",
            env=ENV,
            output_file=tmp_path / "t.output",
            timeout_ms=1_000,
            now=time.monotonic(),
            children=ChildProcesses(),
        )
    assert len(os.listdir("/proc/self/fd")) == before


@pytest.mark.parametrize("shared", ["parent", "task-folder"])
def test_a_task_folder_another_user_could_swap_is_refused(tmp_path: Path, shared: str) -> None:
    """DEC-HOME-1: in a shared temp directory another user could have made
    the folders first; a task folder that is not private, or one inside a
    folder others may write, is refused and no output file is created."""
    parent = tmp_path / "agentx-tasks-x"
    tasks = parent / "session"
    tasks.mkdir(parents=True, mode=0o700)
    (parent if shared == "parent" else tasks).chmod(0o777)
    with pytest.raises(PermissionError, match="not a private folder"):
        BackgroundCommand(
            "true",
            cwd=tmp_path,
            env=ENV,
            output_file=tasks / "t.output",
            timeout_ms=1_000,
            now=time.monotonic(),
            children=ChildProcesses(),
        )
    assert list(tasks.iterdir()) == []


def test_event_log_flushes_buffered_events_once(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    log = InternalEventLog(path)
    log.turn_ended(result_uuid="r1", subtype="success", prompt_suggestion_uuid=None)
    log.task_ended("t1", "completed")
    assert read_events(path) == ()  # buffered, not yet written
    log.flush()
    log.flush()  # nothing new: no second copy
    assert read_events(path) == (
        {
            "type": "turn_end",
            "result_uuid": "r1",
            "subtype": "success",
            "prompt_suggestion_uuid": None,
        },
        {"type": "task_end", "task_id": "t1", "status": "completed"},
    )


def test_event_log_without_a_path_keeps_nothing(tmp_path: Path) -> None:
    log = InternalEventLog(None)
    log.task_ended("t1", "stopped")
    log.flush()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("text", "suggestion"),
    [
        pytest.param("  run the tests  \nsecond line", "run the tests", id="first-line"),
        pytest.param("\n\n", None, id="blank"),
        pytest.param("", None, id="empty"),
        pytest.param("x" * MAX_SUGGESTION_CHARS, "x" * MAX_SUGGESTION_CHARS, id="at-limit"),
        pytest.param(
            "x" * (MAX_SUGGESTION_CHARS + 1),
            "x" * (MAX_SUGGESTION_CHARS - 1) + "…",
            id="past-limit",
        ),
    ],
)
def test_suggestion_is_the_first_line_bounded(text: str, suggestion: str | None) -> None:
    assert first_line(text) == suggestion
