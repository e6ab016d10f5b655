"""The ``--await-initialize`` shell: the hold core, its lock and its deadline
timer (DEC-PROFILE-2, DECISIONS section 8).

:class:`~agentx.messages.initialize_hold.InitializeHold` decides; this shell
serialises the reader thread (which holds and releases prompts) and the
timer thread (which ends the session at the deadline), and ends the session
with the core's one ERROR line and status 2. Imported only when the flag is
given, so a session without it loads none of this.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from agentx.actors.supervision import ExitLatch
from agentx.diagnostics import logger
from agentx.messages.decode import InboundRecord
from agentx.messages.initialize_hold import AWAIT_SECONDS, AWAIT_STATUS, Ending, InitializeHold


class InitializeWait:
    """Holds prompts until ``initialize``; the deadline timer starts at once."""

    def __init__(
        self,
        *,
        supervision: ExitLatch,
        seconds: float = AWAIT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._hold: InitializeHold[InboundRecord] = InitializeHold(
            armed=True, started=clock(), seconds=seconds
        )
        self._done = threading.Event()
        self._supervision = supervision
        self._ended = False
        threading.Thread(target=self._watch, name="agentx-await-initialize", daemon=True).start()

    @property
    def ended(self) -> bool:
        """True once the wait ended the session (nothing more is carried)."""
        return self._ended

    def hold(self, record: InboundRecord) -> bool:
        """Hold a prompt that arrived before ``initialize`` (True)."""
        with self._lock:
            return self._hold.hold(record)

    def release(self) -> tuple[InboundRecord, ...]:
        """``initialize`` arrived: the held prompts, in order."""
        with self._lock:
            held = self._hold.release()
        self._done.set()
        return held

    def on_eof(self) -> bool:
        """The input ended: False when that ended the session (prompts were
        held and ``initialize`` never came), True to end it as usual."""
        return not self._end("eof")

    def _end(self, why: Ending) -> bool:
        with self._lock:
            if why == "deadline" and not self._hold.expired(self._clock()):
                return False
            line = self._hold.end(why)
        if line is None:
            return False
        self._ended = True
        self._done.set()
        logger.error("{}", line)
        self._supervision.decide(AWAIT_STATUS)
        return True

    def _watch(self) -> None:
        while not self._done.wait(max(0.0, self._hold.deadline - self._clock())):
            if self._end("deadline"):
                return
            if not self._hold.waiting:
                return
