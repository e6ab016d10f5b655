"""The CLI's signal gate: SIGINT, SIGTERM and SIGHUP end the session
(DECISIONS section 8: 130, 143, 129; a second signal exits at once).

CPython runs a Python signal handler on the main thread only, and only once
that thread runs bytecode again; the kernel may deliver the signal to any
thread. While the host's main thread blocks in its wait for the session's
ending, a signal caught by an actor's thread would wait there unseen for as
long as the session lasts. So the handlers decide nothing: the C-level
handler writes the signal's number to a wakeup pipe
(:func:`signal.set_wakeup_fd`) whichever thread it ran on, and the
``agentx-signals`` thread, blocked on that pipe's read, hands it to the
session's :class:`~agentx.actors.supervision.ExitLatch`. Nothing polls.

Before a host is attached nothing needs stopping: the main thread's handler
exits 128+N at once (the launch runs Python code, so it runs promptly); a
signal the watcher saw first is handed to the latch when it is attached.
Only the CLI installs the gate; the embedding API never does.
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType
from typing import Final

from agentx.actors.supervision import ExitLatch, signal_status

HANDLED_SIGNALS: Final = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


class SignalGate:
    """Install once, on the main thread, before any other thread starts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latch: ExitLatch | None = None
        self._pending: int | None = None

    def install(self) -> None:
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)  # the C handler must never block
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        for signum in HANDLED_SIGNALS:
            signal.signal(signum, self._handle)
        threading.Thread(
            target=self._watch, args=(read_fd,), name="agentx-signals", daemon=True
        ).start()

    def attach(self, latch: ExitLatch) -> None:
        """From now on a signal ends the session through ``latch``."""
        with self._lock:
            self._latch = latch
            pending, self._pending = self._pending, None
        if pending is not None:
            self._deliver(latch, pending)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._latch is None:
            raise SystemExit(signal_status(signum))

    def _watch(self, read_fd: int) -> None:
        while data := os.read(read_fd, 64):
            for signum in data:
                if signum in HANDLED_SIGNALS:
                    self._signalled(signum)

    def _signalled(self, signum: int) -> None:
        with self._lock:
            latch = self._latch
            if latch is None:
                self._pending = self._pending or signum
                return
        self._deliver(latch, signum)

    @staticmethod
    def _deliver(latch: ExitLatch, signum: int) -> None:
        if not latch.first_signal(signum):
            # The second signal: every process below agentx goes with it.
            from agentx.tools.orphans import kill_below  # noqa: PLC0415 - only then

            kill_below()
            os._exit(latch.code)
