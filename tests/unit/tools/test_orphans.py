"""The subreaper with real processes (DEC-EXIT-1): an orphan that left its
group is adopted, reaped once it exits, never at the cost of a status a
``Popen`` waits for, and ended at shutdown. Each case runs in a fresh Python
process: becoming a subreaper is a property of the whole process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

WAIT = 30.0

PRELUDE = textwrap.dedent(
    """
    import os, select, signal
    from pathlib import Path
    from agentx.tools.orphans import Orphans
    from agentx.tools.process import ChildProcesses, GroupProcess

    def exited(pid):
        fd = os.pidfd_open(pid)
        try:
            assert select.select([fd], [], [], 10)[0], pid
        finally:
            os.close(fd)

    def state(pid):
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
        except FileNotFoundError:
            return None
        return stat[stat.rfind(b")") + 2 :][:1].decode()

    def run(children, command, lines=1):
        # The escapes write their pids to a fifo the shell reads them back
        # from, so the shell ends only once every one of them has written.
        wrapped = (
            'T=$(mktemp -u) && mkfifo "$T" && exec 3<>"$T" && rm "$T"; '
            f"{{ {command}\\n}} >&3 </dev/null; head -n {lines} <&3"
        )
        group = GroupProcess(["/bin/bash", "-c", wrapped], cwd=Path("/"),
                             env={"PATH": os.environ["PATH"]}, children=children)
        out = b""
        while not group.done:
            out += b"".join(c.data for c in group.pump(1.0))
        return group, out
    """
)


def run(body: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(body)],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_an_orphan_that_exits_is_reaped_by_the_next_sweep() -> None:
    out = run(
        """
        orphans = Orphans(grace=0.0)
        children = ChildProcesses(orphans=orphans)
        _, out = run(children, "setsid -f sh -c 'echo $$; exec sleep 0.2'")
        pid = int(out.split()[0])
        assert orphans.adopting is True
        with open(f"/proc/{pid}/stat", "rb") as f:
            assert f.read().split(b")")[1].split()[1] == str(os.getpid()).encode()
        exited(pid)
        assert state(pid) == "Z"  # adopted: this process is its parent now
        orphans.sweep()
        assert state(pid) is None
        print("ok")
        """
    )
    assert out == "ok\n"


def test_a_sweep_never_takes_a_claimed_childs_status() -> None:
    """A claimed leader that exited with 7 and is not yet waited for is left
    to its Popen, even with no grace at all."""
    out = run(
        """
        orphans = Orphans(grace=0.0)
        children = ChildProcesses(orphans=orphans)
        group = GroupProcess(["/bin/sh", "-c", "exit 7"], cwd=Path("/"), env={},
                             children=children)
        exited(group.pid)
        assert state(group.pid) == "Z"
        orphans.sweep()
        assert state(group.pid) == "Z"
        while not group.done:
            group.pump(1.0)
        assert group.returncode == 7
        print("ok")
        """
    )
    assert out == "ok\n"


def test_an_unclaimed_zombie_waits_for_the_grace() -> None:
    out = run(
        """
        orphans = Orphans(grace=3600.0)
        children = ChildProcesses(orphans=orphans)
        _, out = run(children, "setsid -f sh -c 'echo $$'")
        pid = int(out.split()[0])
        exited(pid)
        orphans.sweep()
        assert state(pid) == "Z"  # a library's waiter would still get it
        os.waitpid(pid, 0)
        print("ok")
        """
    )
    assert out == "ok\n"


def test_terminate_all_ends_every_escape_and_reaps_it() -> None:
    """setsid, setsid -f, a double fork, a TERM-ignoring orphan: all gone."""
    out = run(
        """
        orphans = Orphans()
        children = ChildProcesses(orphans=orphans, term_grace_s=0.5, kill_wait_s=1.0)
        _, out = run(children, '''
            setsid sleep 1000 & echo $!
            setsid -f sh -c 'echo $$; exec sleep 1000'
            ( setsid sh -c 'echo $$; exec sleep 1000' & )
            setsid sh -c 'trap "" TERM; echo $$; while :; do sleep 1; done' &
            ''', lines=4)
        pids = [int(word) for word in out.split()]
        assert len(pids) == 4 and all(state(pid) in {"S", "R"} for pid in pids), pids
        children.terminate_all()
        assert [pid for pid in pids if state(pid) is not None] == []
        print("ok")
        """
    )
    assert out == "ok\n"
