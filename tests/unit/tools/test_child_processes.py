"""The session's child registry (DECISIONS section 8: a session leaves nothing
running) with real subprocesses: foreground and background Bash, hooks. Every
wait is on a pidfd, a FIFO or a thread join with a deadline, never a sleep."""

from __future__ import annotations

import os
import select
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentx.hooks.process import hook_env, start_hook
from agentx.messages.hooks.events import Common, event_input
from agentx.tools.base import ToolContext
from agentx.tools.bash import BashTool
from agentx.tools.process import ChildProcesses, GroupProcess
from agentx.turns.background import BackgroundCommand
from agentx.turns.cancel import CancelScope

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
WAIT = 10.0


def terminated(pid: int, within: float = WAIT) -> bool:
    """Whether ``pid`` has terminated within ``within`` s, seen through its pidfd
    (a zombie counts: PID 1 in a container may never reap an orphan)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], within)
    finally:
        os.close(fd)
    return bool(readable)


class Registry(ChildProcesses):
    """The real registry, telling the test when a group has registered: the
    shell may write its pids before the thread that forked it registers it."""

    def __init__(self, **kwargs: float) -> None:
        super().__init__(**kwargs)
        self.registered = threading.Event()

    def register(self, group: GroupProcess) -> None:
        super().register(group)
        self.registered.set()


def read_pids(fifo: Path, count: int) -> list[int]:
    """The ``count`` pids a command writes to ``fifo`` (blocks until it does)."""
    with fifo.open() as pipe:
        return [int(pipe.readline()) for _ in range(count)]


def start_bash(
    children: Registry, tmp_path: Path, command: str
) -> tuple[threading.Thread, list[Any]]:
    """Run ``command`` with the Bash tool on a thread, as the turn worker does;
    returns once the shell's group is registered."""
    ctx = ToolContext(cwd=tmp_path, env=ENV, children=children)
    results: list[Any] = []
    worker = threading.Thread(
        target=lambda: results.append(
            BashTool().run({"command": command, "timeout": 600_000}, ctx, CancelScope())
        )
    )
    worker.start()
    assert children.registered.wait(WAIT)
    return worker, results


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pids"
    os.mkfifo(path)
    return path


def test_foreground_bash_and_its_background_sleep_are_terminated(
    tmp_path: Path, fifo: Path
) -> None:
    children = Registry()
    worker, results = start_bash(
        children, tmp_path, f"sleep 300 & {{ echo $$; echo $!; }} > {fifo}; wait"
    )
    shell, sleep = read_pids(fifo, 2)
    assert children.live == 1
    children.terminate_all()
    assert terminated(shell) and terminated(sleep)
    worker.join(WAIT)
    assert not worker.is_alive()
    assert results[0].is_error and results[0].content.startswith("[killed by signal 15]")
    assert children.live == 0


def test_a_group_that_ignores_term_is_killed_after_the_grace(tmp_path: Path, fifo: Path) -> None:
    grace = 0.3
    children = Registry(term_grace_s=grace)
    worker, _ = start_bash(
        children,
        tmp_path,
        f"trap '' TERM; sleep 300 & {{ echo $$; echo $!; }} > {fifo}; wait",
    )
    shell, sleep = read_pids(fifo, 2)
    began = time.monotonic()
    children.terminate_all()
    took = time.monotonic() - began
    assert terminated(shell) and terminated(sleep)
    assert grace <= took < grace + 2.0
    worker.join(WAIT)
    assert not worker.is_alive()


def test_background_command_and_hook_are_terminated(tmp_path: Path, fifo: Path) -> None:
    hook_fifo = (
        tmp_path / "hook-pids"
    )  # a fifo of its own: the task's writer may still hold the first
    os.mkfifo(hook_fifo)
    children = ChildProcesses()
    background = BackgroundCommand(
        f"sleep 300 & echo $! > {fifo}; wait",
        cwd=tmp_path,
        env=ENV,
        output_file=tmp_path / "task.output",
        timeout_ms=600_000,
        now=0.0,
        children=children,
    )
    (task_sleep,) = read_pids(fifo, 1)
    stdin = event_input(
        "PermissionRequest",
        Common(session_id="s", transcript_path="", cwd=str(tmp_path), permission_mode="default"),
        {"tool_name": "Bash", "tool_input": {}, "tool_use_id": "t"},
    )
    hook = start_hook(
        f"sleep 300 & echo $! > {hook_fifo}; wait",
        stdin,
        cwd=tmp_path,
        env=hook_env({}, os.environ, project_dir=tmp_path),
        timeout_s=600,
        children=children,
    )
    (hook_sleep,) = read_pids(hook_fifo, 1)
    assert children.live == 2
    children.terminate_all()
    assert terminated(task_sleep) and terminated(hook_sleep)
    assert terminated(hook.pid)
    # The drivers still finish their processes as usual.
    while not background.done:
        background.pump(1.0, 0.0)
    assert background.exit_code == -15
    finished = hook.wait(WAIT)
    assert finished is not None and finished.outcome == "error"
    assert children.live == 0


def test_nothing_starts_after_terminate_all(tmp_path: Path) -> None:
    children = ChildProcesses()
    children.terminate_all()
    fds = len(os.listdir("/proc/self/fd"))
    marker = tmp_path / "ran"
    with pytest.raises(OSError, match="shutting down"):
        GroupProcess(
            ["/bin/sh", "-c", f"echo $$ > {marker}; exec sleep 300"],
            cwd=tmp_path,
            env=ENV,
            children=children,
        )
    if marker.exists():  # it may have run before the kill landed; it is gone now
        assert terminated(int(marker.read_text()), 0)
    assert len(os.listdir("/proc/self/fd")) == fds
    assert children.live == 0
    ctx = ToolContext(cwd=tmp_path, env=ENV, children=children)
    result = BashTool().run({"command": "true"}, ctx, CancelScope())
    assert (result.is_error, result.content) == (
        True,
        "Bash: cannot start the shell: the session is shutting down",
    )


def test_terminate_all_is_idempotent_and_thread_safe(tmp_path: Path, fifo: Path) -> None:
    children = Registry()
    worker, _ = start_bash(children, tmp_path, f"echo $$ > {fifo}; exec sleep 300")
    (shell,) = read_pids(fifo, 1)
    callers = [threading.Thread(target=children.terminate_all) for _ in range(4)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(WAIT)
        assert not caller.is_alive()
    assert terminated(shell)
    children.terminate_all()
    worker.join(WAIT)
    assert not worker.is_alive()


def test_a_finished_child_leaves_the_registry(tmp_path: Path) -> None:
    children = ChildProcesses()
    ctx = ToolContext(cwd=tmp_path, env=ENV, children=children)
    assert BashTool().run({"command": "echo hi"}, ctx, CancelScope()).content == "hi\n"
    assert children.live == 0
    began = time.monotonic()
    children.terminate_all()  # nothing to stop: returns at once
    assert time.monotonic() - began < 0.1
