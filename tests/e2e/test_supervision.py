"""End-to-end: how the real process ends when something goes wrong
(DECISIONS section 8: stdout closed at start is 3 at once; SIGINT, SIGTERM
and SIGHUP are 130, 143 and 129, with the active turn's result, its child
process gone and no traceback; library loggers are one WARNING line).

Every child reports its pid through a fifo the test reads, so nothing here
sleeps to wait for the process.
"""

from __future__ import annotations

import base64
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentx.config.env_registry import OFFLINE_NOTICE
from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    Record,
    agentx_command,
    base_env,
    is_result,
    is_state,
    log_lines,
    scripted_session,
    user,
    write_auth,
)
from tests.e2e.test_mcp import FAKE, start, wait_status

HELLO = Path(__file__).resolve().parents[2] / "examples" / "hello.ndjson"
#: How long a dead child may stay visible (reparented to init, then reaped).
REAP_SECONDS = 10.0
#: The ``mcp`` package's wait for a stdio server to exit after its stdin closed.
MCP_GRACE_SECONDS = 2.0


def test_stdout_closed_before_the_first_record_exits_3_at_once(home: Path) -> None:
    """The reader closed the pipe before agentx wrote anything: the first
    write fails, the session ends with status 3, one line and no traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [*agentx_command(), *DUPLEX],
            stdin=HELLO.open("rb"),
            stdout=write_end,
            stderr=subprocess.PIPE,
            env=base_env(home),
            cwd=home,
            timeout=20,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 3
    # DEC-AUTH-4: the offline echo provider's notice line comes first.
    assert log_lines(done.stderr) == [
        f"agentx: WARNING: {OFFLINE_NOTICE}",
        "agentx: ERROR: output failed (broken_pipe); exiting",
    ]


def test_a_closed_stdout_descriptor_exits_3_before_anything_opens(home: Path) -> None:
    """Descriptor 1 closed outright: nothing may take its number (a session
    file would receive the records); status 3 with one line."""
    done = subprocess.run(
        [*agentx_command(), *DUPLEX],
        stdin=HELLO.open("rb"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=base_env(home),
        cwd=home,
        timeout=20,
        check=False,
        preexec_fn=lambda: os.close(1),
    )
    assert done.returncode == 3
    assert done.stderr.decode().splitlines() == [
        "agentx: stdout is closed; no record can be written"
    ]
    assert not (home / "sessions").exists()


def _bash(command: str, *, background: bool) -> Record:
    return {
        "tool_use": {
            "name": "Bash",
            "input": {
                "command": command,
                "description": "reports its pid, then waits",
                "run_in_background": background,
            },
        }
    }


def _read_pid(fifo: Path) -> int:
    """Blocks until the child opened the fifo and wrote its pid."""
    with fifo.open() as reader:
        return int(reader.read().strip())


def _gone(pid: int) -> bool:
    """The pid no longer runs: absent, or a zombie awaiting its reaper."""
    deadline = time.monotonic() + REAP_SECONDS
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
            return True
        os.sched_yield()
    return False


SIGNALS = [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]


@pytest.mark.parametrize("sig", SIGNALS, ids=["SIGINT", "SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
def test_a_signal_during_bash_cancels_the_turn_and_stops_the_child(
    home: Path,
    tmp_path: Path,
    processes: list[AgentxProcess],
    sig: tuple[int, int],
    background: bool,
) -> None:
    """DECISIONS section 8: the active turn ends with its result
    (error_during_execution, stdout still writable), the child is gone, the
    status is 128+N and stderr holds no traceback."""
    signum, status = sig
    fifo = tmp_path / "pid"
    os.mkfifo(fifo)
    # The shell reports its own pid, then execs: the pid is the sleep's.
    command = f"echo $$ > {fifo}; exec sleep 60"
    turns = [{"steps": [_bash(command, background=background)]}, {"steps": [{"text": "done"}]}]
    proc = scripted_session(home, turns, processes, "--permission-mode", "bypassPermissions")
    proc.send(user("go"))
    pid = _read_pid(fifo)
    proc.proc.send_signal(signum)
    records = proc.rest()
    assert proc.wait() == status
    results = [r["subtype"] for r in proc.seen if is_result(r)]
    if background:
        # DEC-TURN-5: the turn's result waited for its task, which ends
        # ``stopped``; the result follows it.
        assert len(results) == 1
        ended = [r for r in records if r.get("subtype") == "task_notification"]
        assert [r["status"] for r in ended] == ["stopped"]
    else:
        assert results == ["error_during_execution"]
    assert _gone(pid)
    assert "Traceback" not in proc.stderr


def test_a_second_signal_during_the_shutdown_exits_at_once(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """The first SIGTERM cancels the turn (its result is written) and starts
    the shutdown, which then waits on an MCP server that ignores SIGTERM and
    stdin's end (the ``mcp`` package's grace period, then its kill); a second
    SIGTERM exits at once with the same status."""
    stubborn = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); signal.pause()"
    proc = start(
        home,
        processes,
        servers={"stubborn": {"command": sys.executable, "args": ["-c", stubborn]}},
        turns=[{"steps": [{"sleep_ms": 60_000}, {"text": "never"}]}],
    )
    proc.next()
    proc.send(user("go"))
    proc.until(is_state("running"))
    proc.proc.send_signal(signal.SIGTERM)
    assert proc.until(is_result)[-1]["subtype"] == "error_during_execution"
    second = time.monotonic()
    proc.proc.send_signal(signal.SIGTERM)
    assert proc.wait() == 143
    # The stubborn server alone holds a single-signal shutdown this long.
    assert time.monotonic() - second < MCP_GRACE_SECONDS
    assert "Traceback" not in proc.stderr


def test_a_signal_while_idle_exits_with_its_status(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = AgentxProcess(home=home)
    processes.append(proc)
    assert proc.next()["subtype"] == "init"
    proc.proc.send_signal(signal.SIGINT)
    assert proc.rest() == []
    assert proc.wait() == 130
    # DEC-AUTH-4: the notice and nothing else
    assert log_lines(proc.stderr) == [f"agentx: WARNING: {OFFLINE_NOTICE}"]


def test_an_mcp_server_printing_a_non_json_line_is_one_warning(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """The ``mcp`` library logs the bad line with its traceback; routed into
    loguru it is one WARNING line, and the session goes on."""
    noisy = (
        "import runpy, sys; print('this is not JSON', flush=True); "
        f"sys.argv = [{FAKE!r}]; runpy.run_path({FAKE!r}, run_name='__main__')"
    )
    proc = start(
        home, processes, servers={"noisy": {"command": sys.executable, "args": ["-c", noisy]}}
    )
    proc.next()
    wait_status(proc, {"noisy": "connected"})  # the bad line came before its answers
    proc.send(user("still here?"))
    assert proc.until(is_result)[-1]["subtype"] == "success"
    proc.close_stdin()
    assert proc.wait() == 0
    assert "Traceback" not in proc.stderr
    warnings = [line for line in log_lines(proc.stderr) if "JSON" in line]
    assert warnings, proc.stderr
    assert all(line.startswith("agentx: WARNING: ") for line in warnings)


def test_a_signal_aborts_an_open_upload_and_removes_its_temp_files(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """DECISIONS section 8: an upload still open at SIGTERM ends with its one
    terminal record (failed, host_shutdown; WIRE-019) and leaves no file."""
    write_auth(home, [{"id": "t", "type": "scripted", "model": "m"}])
    proc = AgentxProcess(home=home)
    processes.append(proc)
    proc.next()
    data = b"\x89PNG\r\n\x1a\n" + bytes(4096)
    begin, chunk = _upload("upl_open", data)
    # A chunk of an upload that does not exist is rejected; the upload
    # manager handles records in order, so its rejection follows the chunk.
    stray = {**chunk, "upload_id": "upl_none"}
    proc.send(begin, chunk, stray)
    proc.until(lambda r: r.get("type") == "attachment_import_rejected")
    temp = home / "blobs" / "tmp"
    assert [p for p in temp.rglob("*") if p.is_file()]  # the chunk is on disk
    proc.proc.send_signal(signal.SIGTERM)
    records = proc.rest()
    assert proc.wait() == 143
    ended = [r for r in records if r.get("type") == "attachment_import_result"]
    assert [(r["upload_id"], r["status"], r["reason"], r["terminal"]) for r in ended] == [
        ("upl_open", "failed", "host_shutdown", True)
    ]
    assert [p for p in temp.rglob("*") if p.is_file()] == []
    assert "Traceback" not in proc.stderr


def _upload(upload_id: str, data: bytes) -> tuple[Record, Record]:
    """The begin and the first chunk (half of ``data``) of one upload."""
    common = {"type": "attachment_import", "version": 1, "upload_id": upload_id}
    begin = {
        **common,
        "operation": "begin",
        "prompt_uuid": "11111111-1111-4111-8111-111111111111",
        "attachment_id": "att_open",
        "name": "open.png",
        "size_bytes": len(data),
        "mime_type": "image/png",
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    half = base64.b64encode(data[: len(data) // 2]).decode()
    return begin, {**common, "operation": "chunk", "sequence": 0, "data": half}
