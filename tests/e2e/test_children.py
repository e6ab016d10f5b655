"""End-to-end: a session that ends leaves no child process behind (DECISIONS
section 8). Each command writes its shell's and its background ``sleep``'s
pids to a fifo the test reads, so every wait is on the fifo or a pidfd."""

from __future__ import annotations

import os
import select
import signal
import subprocess
from pathlib import Path

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    agentx_command,
    base_env,
    control,
    encode,
    user,
    write_auth,
    write_script,
)

WAIT = 20.0


def terminated(pid: int) -> bool:
    """Whether ``pid`` has terminated within :data:`WAIT` s, seen through its
    pidfd (a zombie counts: PID 1 in a container may never reap an orphan)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], WAIT)
    finally:
        os.close(fd)
    return bool(readable)


def test_an_output_failure_stops_a_running_foreground_bash_and_its_children(
    home: Path, tmp_path: Path
) -> None:
    """The reader closes stdout while a foreground Bash runs: the next write
    fails, the session ends with status 3, and its shutdown step TERMs the
    Bash's process group (the ``sleep`` it left in the background too)."""
    fifo = tmp_path / "pids"
    os.mkfifo(fifo)
    command = f"sleep 300 & {{ echo $$; echo $!; }} > {fifo}; wait"
    step = {"tool_use": {"name": "Bash", "input": {"command": command, "timeout": 600000}}}
    script = write_script(home / "script.json", [{"steps": [step]}, {"steps": []}])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    proc = subprocess.Popen(
        [*agentx_command(), *DUPLEX, "--permission-mode", "bypassPermissions"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=base_env(home),
        cwd=tmp_path,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(encode(user("run it")))
        proc.stdin.flush()
        with fifo.open() as pipe:
            pids = [int(pipe.readline()) for _ in range(2)]
        proc.stdout.close()
        proc.stdin.write(encode(control("r1", "get_context_usage")))
        proc.stdin.flush()
        assert proc.wait(WAIT) == 3
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(WAIT)
    for pid in pids:
        assert terminated(pid)


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "run_in_background"])
def test_sigterm_during_bash_leaves_no_sleep_child(
    home: Path, tmp_path: Path, background: bool
) -> None:
    """SIGTERM while a Bash command (and the ``sleep`` it started) runs: agentx
    exits 143 (DECISIONS section 8) and neither the shell nor its ``sleep``
    outlives it."""
    fifo = tmp_path / "pids"
    os.mkfifo(fifo)
    command = f"sleep 300 & {{ echo $$; echo $!; }} > {fifo}; wait"
    tool_input = {"command": command, "timeout": 600000, "run_in_background": background}
    step = {"tool_use": {"name": "Bash", "input": tool_input}}
    script = write_script(home / "script.json", [{"steps": [step]}, {"steps": []}])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    proc = subprocess.Popen(
        [*agentx_command(), *DUPLEX, "--permission-mode", "bypassPermissions"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=base_env(home),
        cwd=tmp_path,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write(encode(user("run it")))
        proc.stdin.flush()
        with fifo.open() as pipe:
            pids = [int(pipe.readline()) for _ in range(2)]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(WAIT) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(WAIT)
    for pid in pids:
        assert terminated(pid)
