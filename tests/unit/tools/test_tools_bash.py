"""The Bash tool with real subprocesses: output, exit codes, timeout, cancel, cap."""

from __future__ import annotations

import os
import select
import threading
from pathlib import Path
from typing import Any

import pytest

from agentx.actors.task_manager import BackgroundTasks
from agentx.messages.tasks import TaskBoard
from agentx.providers.base import Cancelled
from agentx.tools.base import MAX_OUTPUT_BYTES, ToolContext, encoded_size
from agentx.tools.bash import BACKGROUND_UNAVAILABLE, BashTool
from agentx.turns.cancel import CancelScope

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GREETING": "hi"}


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, env=ENV)


def _run(ctx: ToolContext, scope: CancelScope | None = None, **input: Any) -> Any:
    return BashTool().run(input, ctx, scope or CancelScope())


def _state(stat: str) -> tuple[str, int]:
    """(state letter, process group) from a /proc/<pid>/stat line."""
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0], int(fields[2])


def _alive(pid: int) -> bool:
    """Whether ``pid`` is still running 5 s from now: waits on its pidfd, not a clock.

    A pidfd turns readable when the process terminates, so a SIGKILL already
    sent is observed as soon as it lands (a zombie counts as terminated: PID 1
    in a container may never reap it).
    """
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return False
    try:
        readable, _, _ = select.select([fd], [], [], 5)
    finally:
        os.close(fd)
    return not readable


def _group_alive(pgid: int) -> list[int]:
    """The members of process group ``pgid`` still running (see :func:`_alive`)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, group = _state(stat.read_text())
        except (FileNotFoundError, ProcessLookupError):
            continue
        if group == pgid and state != "Z":
            members.append(int(stat.parent.name))
    return [pid for pid in members if _alive(pid)]


@pytest.mark.parametrize(
    ("command", "content", "is_error"),
    [
        ("echo out; echo err >&2", "out\nerr\n", False),
        ('printf %s "$GREETING"', "hi", False),
        ("pwd", None, False),
        ("echo -n $HOME", "", False),
        ("echo bad; exit 3", "[exit code 3]\nbad", True),
        ("kill -TERM $$", "[killed by signal 15]", True),
        ("true", "", False),
    ],
    ids=["merged-streams", "session-env", "cwd", "clean-env", "exit-code", "signal", "silent"],
)
def test_bash_runs(ctx: ToolContext, command: str, content: str | None, is_error: bool) -> None:
    result = _run(ctx, command=command)
    expected = f"{ctx.cwd}\n" if content is None else content
    assert (result.content, result.is_error) == (expected, is_error)


def test_bash_timeout_kills_group(ctx: ToolContext) -> None:
    pidfile = ctx.cwd / "child.pid"
    result = _run(ctx, command=f"sleep 30 & echo $! > {pidfile}; echo started; wait", timeout=300)
    assert result.is_error
    assert result.content == "Command timed out after 300 ms\nstarted"
    assert not _alive(int(pidfile.read_text()))


def test_bash_background_grandchild_does_not_hang(ctx: ToolContext) -> None:
    """The shell exits while a grandchild keeps stdout open: the call still ends."""
    pidfile = ctx.cwd / "bg.pid"
    result = _run(ctx, command=f"sleep 30 & echo $! > {pidfile}; echo done", timeout=20_000)
    assert (result.content, result.is_error) == ("done\n", False)
    assert not _alive(int(pidfile.read_text()))


def test_bash_cancel_kills_promptly(ctx: ToolContext) -> None:
    fifo = ctx.cwd / "started"
    os.mkfifo(fifo)
    scope = CancelScope()
    outcome: dict[str, BaseException] = {}

    def run() -> None:
        try:
            _run(ctx, scope, command=f"echo $$ > {fifo}; sleep 60 & sleep 60")
        except BaseException as exc:
            outcome["exc"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    pgid = int(fifo.read_text())  # blocks until the shell has started
    scope.cancel()
    worker.join(timeout=5)
    assert not worker.is_alive()
    assert isinstance(outcome.get("exc"), Cancelled)
    assert _group_alive(pgid) == []


def test_bash_already_cancelled(ctx: ToolContext) -> None:
    scope = CancelScope()
    scope.cancel()
    with pytest.raises(Cancelled):
        _run(ctx, scope, command=f"touch {ctx.cwd / 'x'}")
    assert not (ctx.cwd / "x").exists()


@pytest.mark.parametrize(
    "size",
    [MAX_OUTPUT_BYTES - 1, MAX_OUTPUT_BYTES, MAX_OUTPUT_BYTES + 1, 3 * MAX_OUTPUT_BYTES],
    ids=["under", "at-limit", "one-past", "far-past"],
)
def test_bash_output_limit(ctx: ToolContext, size: int) -> None:
    result = _run(ctx, command=f"head -c {size} /dev/zero | tr '\\0' a")
    assert not result.is_error
    if size <= MAX_OUTPUT_BYTES:
        assert result.content == "a" * size
    else:
        assert result.content.startswith("a" * 1000)
        assert result.content.endswith(
            f"[output truncated: {size} bytes in total, {MAX_OUTPUT_BYTES} bytes shown at most]"
        )
        assert encoded_size(result.content) <= MAX_OUTPUT_BYTES


def test_bash_error_status_survives_truncation(ctx: ToolContext) -> None:
    result = _run(ctx, command=f"head -c {2 * MAX_OUTPUT_BYTES} /dev/zero; exit 4")
    assert result.is_error
    assert result.content.startswith("[exit code 4]\n")
    assert encoded_size(result.content) <= MAX_OUTPUT_BYTES


@pytest.mark.parametrize(
    ("input", "message"),
    [
        ({"command": "echo x", "run_in_background": True}, BACKGROUND_UNAVAILABLE),
        ({"command": "  "}, "must not be empty"),
        ({"command": "echo", "timeout": 0}, "at least 1"),
        ({"command": "echo", "timeout": 600_001}, "at most 600000"),
        ({"command": "echo", "shell": "zsh"}, "unexpected parameter"),
        ({}, "missing required parameter 'command'"),
        ({"command": "echo a\x00b"}, "must not contain a NUL character"),
        ({"command": "\x00"}, "must not contain a NUL character"),
    ],
    ids=[
        "background-without-launcher",
        "empty",
        "timeout-zero",
        "timeout-past-max",
        "unknown",
        "missing",
        "nul",
        "only-nul",
    ],
)
def test_bash_invalid_input(ctx: ToolContext, input: dict[str, Any], message: str) -> None:
    result = BashTool().run(input, ctx, CancelScope())
    assert result.is_error and message in result.content


def test_bash_timeout_at_max_accepted(ctx: ToolContext) -> None:
    assert _run(ctx, command="echo ok", timeout=600_000).content == "ok\n"


@pytest.mark.parametrize(
    ("input", "summary"),
    [
        ({"command": "ls -la\nrm x"}, "ls -la; rm x"),
        ({"command": "rm -rf ~", "description": "List files"}, "rm -rf ~"),
        ({"command": "x" * 300}, "x" * 300),
    ],
    ids=["every-line", "never-the-models-description", "long"],
)
def test_bash_summary(input: dict[str, Any], summary: str) -> None:
    assert BashTool().summarize(input) == summary


def _background_ctx(tmp_path: Path, cwd: Path) -> tuple[ToolContext, list[Any], BackgroundTasks]:
    records: list[Any] = []
    tasks = BackgroundTasks(
        new_board=lambda: TaskBoard(
            session_id=lambda: "s", new_uuid=lambda: "0" * 36, progress_interval=60
        ),
        emit=records.extend,
        tasks_dir=tmp_path / "tasks",
        new_uuid=lambda: "00000000-0000-4000-8000-00000000000a",
        on_started=lambda: None,
        on_ended=lambda task_id, status: None,
    )
    ctx = ToolContext(cwd=cwd, env=ENV, tool_use_id="toolu_9", background=tasks)
    return ctx, records, tasks


def test_bash_in_background_names_the_task_and_its_output_file(tmp_path: Path) -> None:
    """DEC-TURN-3: the result comes at once; the command runs on."""
    ctx, records, tasks = _background_ctx(tmp_path, tmp_path)
    result = _run(ctx, command="echo $GREETING", description="greets", run_in_background=True)
    tasks.shutdown()  # waits for the watcher: the task has ended, stopped or not
    output = tmp_path / "tasks" / "task_00000000000a.output"
    assert not result.is_error
    assert result.content == (
        "Command running in background with ID: task_00000000000a. "
        f"Output is being written to: {output}"
    )
    started = records[0]
    assert (started["subtype"], started["tool_use_id"], started["description"]) == (
        "task_started",
        "toolu_9",
        "greets",
    )
    assert records[-1]["subtype"] == "task_notification"


def test_bash_in_background_that_cannot_start_is_an_error(tmp_path: Path) -> None:
    ctx, records, tasks = _background_ctx(tmp_path, tmp_path / "missing-cwd")
    result = _run(ctx, command="true", run_in_background=True)
    assert result.is_error
    assert result.content.startswith("Bash: cannot start the background command")
    assert records == []
    assert list((tmp_path / "tasks").iterdir()) == []  # no stray output file
    tasks.shutdown()
