"""The CLI's signal gate in a real process (DECISIONS section 8).

The kernel delivers a process-directed signal to any thread; the tests send
it with ``pthread_kill`` to a thread other than the main one, once the main
thread blocks without a deadline, so the case that used to hang (CPython
runs a Python handler on the main thread only, when it next runs bytecode)
happens every time. The gate is process-wide, so each case runs in its own Python.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

PRELUDE = """
import inspect, os, signal, sys, threading
from agentx.actors.signals import SignalGate
from agentx.actors.supervision import ExitLatch

gate = SignalGate()
gate.install()
latch = ExitLatch()

def when_main_blocks(*signums):
    # On a thread of its own, once the main thread blocks in a lock's wait
    # with no deadline, send each signal to this thread, one at a time.
    # Blocked means: its frame stands at Condition.wait's blocking acquire
    # (the waiter is acquired twice: at once, then the blocking second time)
    # and the kernel has it in a futex wait without a timeout (waiting for
    # the GIL has one, and that path runs the handlers on its own).
    lines, first = inspect.getsourcelines(threading.Condition.wait)
    stripped = [text.strip() for text in lines]
    line = first + len(stripped) - 1 - stripped[::-1].index("waiter.acquire()")
    main = threading.main_thread()
    syscall = f"/proc/self/task/{main.native_id}/syscall"

    def blocked():
        frame = sys._current_frames().get(main.ident)
        if frame is None or frame.f_code is not threading.Condition.wait.__code__:
            return False
        with open(syscall) as status:
            fields = status.read().split()
        return frame.f_lineno == line and len(fields) > 4 and fields[4] == "0x0"

    def run():
        for signum in signums:
            while not blocked():
                os.sched_yield()
            signal.pthread_kill(threading.get_ident(), signum)

    threading.Thread(target=run, daemon=True).start()
"""
#: Bounds a hang; none of the cases waits for anything but a signal.
TIMEOUT = 20


def _run(body: str) -> subprocess.CompletedProcess[str]:
    script = PRELUDE + textwrap.dedent(body)
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def test_a_signal_caught_by_another_thread_ends_the_blocked_wait() -> None:
    """The main thread blocks in the latch's wait with no deadline; SIGTERM
    lands on another thread and still decides status 143."""
    done = _run(
        """
        gate.attach(latch)
        when_main_blocks(signal.SIGTERM)
        sys.exit(latch.wait())
        """
    )
    assert (done.returncode, done.stderr) == (143, "")


def test_a_second_signal_exits_at_once_with_the_first_status() -> None:
    """The first SIGHUP decides 129; the second, while the main thread
    blocks on something that never comes, exits the process with it."""
    done = _run(
        """
        gate.attach(latch)
        when_main_blocks(signal.SIGHUP, signal.SIGINT)
        latch.wait()
        threading.Event().wait()
        """
    )
    assert (done.returncode, done.stderr) == (129, "")


def test_a_signal_before_a_host_is_attached_exits_at_once() -> None:
    done = _run(
        """
        os.kill(os.getpid(), signal.SIGINT)
        threading.Event().wait()
        """
    )
    assert (done.returncode, done.stderr) == (130, "")


def test_other_signals_keep_their_default_action() -> None:
    done = _run(
        """
        gate.attach(latch)
        os.kill(os.getpid(), signal.SIGUSR1)
        threading.Event().wait()
        """
    )
    assert done.returncode == -10
