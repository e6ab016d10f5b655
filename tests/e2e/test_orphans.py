"""End-to-end: nothing a Bash command started survives the session, even what
left its process group (DEC-EXIT-1, DECISIONS section 8).

One command starts four escapes, each writing its pid to a fifo the test
reads: ``setsid cmd &``, ``setsid -f``, a double fork into a new session and
``nohup setsid cmd &`` (what stays in the group, a plain ``nohup cmd &`` or
double fork, is killed with the group when the shell ends: see
test_children.py). The session then ends by
input EOF, SIGTERM or SIGINT, with the command run in the foreground and in
the background. Once agentx has exited, ``/proc`` shows none of them alive.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    is_result,
    user,
    write_auth,
    write_script,
)

WAIT = 20.0
ESCAPES = 4


def escape_command(fifo: Path) -> str:
    return "; ".join(
        (
            "{ setsid sleep 1001 & echo $!",
            "setsid -f sh -c 'echo $$; exec sleep 1002'",
            "( setsid sh -c 'echo $$; exec sleep 1003' & )",
            "nohup setsid sleep 1004 2>/dev/null & echo $!",
            f"}} > {fifo}",
        )
    )


def live(pid: int) -> bool:
    """Whether ``pid`` is a live process now (a zombie is not: it has ended)."""
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_bytes()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X")


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
@pytest.mark.parametrize(
    ("ending", "status"),
    [("eof", 0), ("sigterm", 143), ("sigint", 130)],
)
def test_escaped_children_are_gone_when_the_session_ends(
    home: Path, tmp_path: Path, background: bool, ending: str, status: int
) -> None:
    fifo = tmp_path / "pids"
    os.mkfifo(fifo)
    tool_input = {"command": escape_command(fifo), "run_in_background": background}
    step = {"tool_use": {"name": "Bash", "input": tool_input}}
    script = write_script(home / "script.json", [{"steps": [step]}, {"steps": []}])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    agent = AgentxProcess(
        [*DUPLEX, "--permission-mode", "bypassPermissions"], home=home, cwd=tmp_path
    )
    try:
        agent.send(user("run it"))
        with fifo.open() as pipe:
            pids = [int(pipe.readline()) for _ in range(ESCAPES)]
        assert all(live(pid) for pid in pids), "every escape runs while the session does"
        if ending == "eof":
            agent.until(is_result, WAIT)
            agent.close_stdin()
        else:
            agent.proc.send_signal(signal.SIGTERM if ending == "sigterm" else signal.SIGINT)
        assert agent.wait(WAIT) == status
    finally:
        agent.kill()
    assert [pid for pid in pids if live(pid)] == []
